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
  }

  /// The parameter's name, as graphs and `--filter` write it.
  public let name: String
  /// What values the parameter takes.
  public let kind: Kind
  /// nil: optional, with no value unless given.
  public let defaultValue: FilterValue?
  /// What the parameter does, in one line, for `darkroom filters` and the docs.
  public let doc: String

  /// Declares a parameter.
  ///
  /// - Parameters:
  ///   - name: Its name, lowercase.
  ///   - kind: What values it takes.
  ///   - value: Its default, or nil for a parameter that has no value unless given.
  ///   - doc: What it does, in one line.
  public init(_ name: String, _ kind: Kind, default value: FilterValue?, _ doc: String) {
    self.name = name
    self.kind = kind
    self.defaultValue = value
    self.doc = doc
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
    case (.word, .number), (.ratio, .number):
      throw refuse()
    }
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
public struct FilterArguments: Sendable, Hashable {
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
