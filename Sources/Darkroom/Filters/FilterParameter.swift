/// A value of a filter parameter: a number or a word.
///
/// In JSON it is a plain number or string: `{"exposure": 0.5, "aspect": "4:5"}`.
/// `FilterValue` is a `Sendable` value type.
public enum FilterValue: Sendable, Hashable, Codable, CustomStringConvertible {
  /// A number, such as `0.5` or `90`.
  case number(Double)
  /// A word or a ratio, such as `vertical` or `4:5`.
  case text(String)

  /// Decodes a JSON number as ``number(_:)`` and a JSON string as ``text(_:)``.
  ///
  /// - Throws: A `DecodingError` for any other JSON value.
  public init(from decoder: Decoder) throws {
    let container = try decoder.singleValueContainer()
    if let number = try? container.decode(Double.self) {
      self = .number(number)
    } else {
      self = .text(try container.decode(String.self))
    }
  }

  /// Encodes a JSON number or a JSON string.
  ///
  /// - Throws: Whatever `encoder` throws.
  public func encode(to encoder: Encoder) throws {
    var container = encoder.singleValueContainer()
    switch self {
    case .number(let number): try container.encode(number)
    case .text(let text): try container.encode(text)
    }
  }

  /// The value as `--filter` writes it: `90`, not `90.0`; `0.5`; `vertical`.
  public var description: String {
    switch self {
    case .number(let number):
      number == number.rounded() && abs(number) < 1e15 ? String(Int(number)) : String(number)
    case .text(let text): text
    }
  }
}

/// One parameter of a filter, declared once: validation, the text syntax, the JSON form,
/// `darkroom filters` and the docs all read this declaration.
///
/// Read the declarations of the built-in filters from ``Filters/catalog``.
/// `FilterParameter` is a `Sendable` value type.
public struct FilterParameter: Sendable {
  /// What values a parameter takes.
  public enum Kind: Sendable {
    /// A number in a closed range.
    case number(ClosedRange<Double>)
    /// One of a fixed set of numbers (such as 90, 180, 270).
    case choice([Double])
    /// One of a fixed set of words.
    case word([String])
    /// A ratio written `W:H` with positive numbers, such as `4:5`.
    case ratio
    /// Points of a curve, `x:y` pairs of fractions with x rising, joined by commas:
    /// `0:0,0.25:0.2,1:1` (2 to 16 points).
    case points
  }

  /// The parameter's name, as graphs and `--filter` write it.
  public let name: String
  /// What values the parameter takes.
  public let kind: Kind
  /// nil: optional, with no value unless given.
  public let defaultValue: FilterValue?
  /// What the parameter does, in one line, for `darkroom filters` and the docs.
  public let doc: String
  /// Whether the value is a length in pixels of the full-size image (a radius), scaled
  /// with the image when an edit is previewed smaller.
  public let isPixels: Bool

  /// Declares a parameter.
  ///
  /// - Parameters:
  ///   - name: Its name, lowercase.
  ///   - kind: What values it takes.
  ///   - value: Its default, or nil for a parameter that has no value unless given.
  ///   - doc: What it does, in one line.
  ///   - pixels: Whether the value is a length in pixels of the full-size image.
  public init(
    _ name: String, _ kind: Kind, default value: FilterValue?, _ doc: String, pixels: Bool = false
  ) {
    self.name = name
    self.kind = kind
    self.defaultValue = value
    self.doc = doc
    self.isPixels = pixels
  }

  /// What the parameter takes, in the words error messages and `darkroom filters` use.
  public var expectation: String {
    switch kind {
    case .number(let range):
      "number between \(FilterValue.number(range.lowerBound)) and \(FilterValue.number(range.upperBound))"
    case .choice(let values):
      "one of " + values.map { FilterValue.number($0).description }.joined(separator: ", ")
    case .word(let words): "one of " + words.joined(separator: ", ")
    case .ratio: "ratio W:H such as 4:5"
    case .points: "points x:y,x:y,... (2 to 16, fractions 0 to 1, x rising) such as 0:0,0.5:0.6,1:1"
    }
  }

  /// Checks a value against the declaration; throws the message users see.
  func check(_ value: FilterValue, filter: String) throws(DarkroomError) -> FilterValue {
    func refuse() -> DarkroomError {
      DarkroomError(
        .invalidArgument, "Expected \(expectation) for \(filter).\(name) but received \(value)")
    }
    switch (kind, value) {
    case (.number(let range), .number(let number)):
      guard number.isFinite, range.contains(number) else { throw refuse() }
      return value
    case (.number, .text(let text)), (.choice, .text(let text)):
      guard let number = Double(text) else { throw refuse() }
      return try check(.number(number), filter: filter)
    case (.choice(let values), .number(let number)):
      guard values.contains(number) else { throw refuse() }
      return value
    case (.word(let words), .text(let text)):
      guard words.contains(text.lowercased()) else { throw refuse() }
      return .text(text.lowercased())
    case (.ratio, .text(let text)):
      guard Self.ratio(text) != nil else { throw refuse() }
      return value
    case (.points, .text(let text)):
      guard let points = Self.points(text) else { throw refuse() }
      // One spelling for the same curve: shortest numbers, commas between points.
      return .text(
        points.map { "\(FilterValue.number($0.x)):\(FilterValue.number($0.y))" }.joined(
          separator: ","))
    case (.word, .number), (.ratio, .number), (.points, .number):
      throw refuse()
    }
  }

  /// `x:y,x:y,...` as 2 to 16 points of fractions with x strictly rising; nil otherwise.
  static func points(_ text: String) -> [(x: Double, y: Double)]? {
    let pairs = text.split(separator: ",", omittingEmptySubsequences: false)
    guard (2...16).contains(pairs.count) else { return nil }
    var points: [(x: Double, y: Double)] = []
    for pair in pairs {
      let parts = pair.split(separator: ":", omittingEmptySubsequences: false)
      guard parts.count == 2, let x = Double(parts[0]), let y = Double(parts[1]),
        (0...1).contains(x), (0...1).contains(y), x > (points.last?.x ?? -1)
      else { return nil }
      points.append((x, y))
    }
    return points
  }

  /// `W:H` as a positive width-to-height ratio.
  static func ratio(_ text: String) -> Double? {
    let parts = text.split(separator: ":")
    guard parts.count == 2, let w = Double(parts[0]), let h = Double(parts[1]), w > 0, h > 0,
      w.isFinite, h.isFinite
    else { return nil }
    return w / h
  }
}

/// A filter's checked parameter values, read by its `apply`.
///
/// `FilterArguments` is a `Sendable` value type.
package struct FilterArguments: Sendable, Hashable {
  let values: [String: FilterValue]

  func number(_ name: String) -> Double? {
    if case .number(let value)? = values[name] { return value }
    return nil
  }

  func text(_ name: String) -> String? {
    if case .text(let value)? = values[name] { return value }
    return nil
  }
}
