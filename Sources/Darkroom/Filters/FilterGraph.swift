import FoundationEssentials

/// One step of a graph: a filter and its checked arguments (defaults filled in, so a graph
/// means the same thing after a default changes).
///
/// ```swift
/// let node = try FilterNode("tone", ["exposure": .number(0.5), "contrast": .number(0.2)])
/// let graph = FilterGraph(nodes: [node, try FilterNode("rotate", ["angle": .number(90)])])
/// ```
///
/// `FilterNode` is a `Sendable` value type.
public struct FilterNode: Sendable, Hashable, Codable {
  /// The filter's name, such as `tone`.
  public let op: String
  /// Every parameter's value by name, defaults included; a parameter with no default is
  /// absent unless it was given.
  public let params: [String: FilterValue]

  /// Checks `params` against the filter's declaration; throws the message users see.
  ///
  /// Filter and parameter names are case-insensitive; a number given as text (`"0.5"`) is
  /// taken as the number.
  ///
  /// - Throws: A ``DarkroomError`` of kind `invalidArgument` for an unknown filter or
  ///   parameter, a value of the wrong kind or out of range, or values that do not go
  ///   together (a crop with only some of its sides, say).
  public init(_ op: String, _ params: [String: FilterValue] = [:]) throws(DarkroomError) {
    guard let filter = Filters.named(op) else {
      throw DarkroomError(
        .invalidArgument,
        "Unknown filter '\(op)': expected one of \(Filters.all.map { $0.name }.joined(separator: ", ")), a preset (\(Presets.names.joined(separator: ", "))) or a .json graph file"
      )
    }
    var checked: [String: FilterValue] = [:]
    for (name, value) in params {
      guard let parameter = filter.parameters.first(where: { $0.name == name.lowercased() }) else {
        throw DarkroomError(
          .invalidArgument,
          "Unknown parameter '\(name)' for \(filter.name): expected \(filter.parameters.map(\.name).joined(separator: ", "))"
        )
      }
      checked[parameter.name] = try parameter.check(value, filter: filter.name)
    }
    for parameter in filter.parameters where checked[parameter.name] == nil {
      checked[parameter.name] = parameter.defaultValue
    }
    try filter.validate(FilterArguments(values: checked))
    self.op = filter.name
    self.params = checked
  }

  /// A node kept as it was stored, unchecked: a filter a later or earlier release knew.
  private init(unchecked op: String, _ params: [String: FilterValue]) {
    self.op = op
    self.params = params
  }

  /// Decodes and checks a node; in a document read leniently (`CodingUserInfoKey.lenient`),
  /// a node this build cannot check is kept as it was written instead.
  ///
  /// - Throws: The ``DarkroomError`` of ``init(_:_:)`` for a node that fails its checks (when
  ///   not lenient), or a `DecodingError` for JSON of the wrong shape.
  public init(from decoder: Decoder) throws {
    let c = try decoder.container(keyedBy: CodingKeys.self)
    let op = try c.decode(String.self, forKey: .op)
    let params = try c.decodeIfPresent([String: FilterValue].self, forKey: .params) ?? [:]
    if decoder.userInfo[.lenient] as? Bool == true {
      self = (try? FilterNode(op, params)) ?? FilterNode(unchecked: op, params)
    } else {
      try self.init(op, params)
    }
  }

  var definition: (any FilterDefinition.Type)? { Filters.named(op) }

  /// `tone exposure=0.5 contrast=0.2`: the text form `--filter` takes, without parameters at
  /// their defaults, except the single choice of filters such as `rotate angle=90` or
  /// `flip direction=horizontal`, which is their meaning.
  public var text: String {
    guard let parameters = definition?.parameters else {
      // A filter this build does not know: every stored value, by name.
      return ([op] + params.keys.sorted().map { "\($0)=\(params[$0].map { "\($0)" } ?? "")" })
        .joined(separator: " ")
    }
    // The one choice of a filter such as rotate (its angle) or flip (its direction) is its
    // meaning, shown even at its default; other defaults are left out.
    var meaning: String?
    if parameters.count == 1, let only = parameters.first {
      if case .number = only.kind {} else { meaning = only.name }
    }
    let parts = parameters.compactMap { p in
      params[p.name].flatMap { $0 == p.defaultValue && p.name != meaning ? nil : "\(p.name)=\($0)" }
    }
    return ([op] + parts).joined(separator: " ")
  }
}

/// An ordered list of filters, applied to the upright image: the edit itself.
///
/// Its JSON form is a versioned document, `{"format": "org.darkroom.filter-graph",
/// "version": 1, "nodes": [{"op": "tone", "params": {"exposure": 0.5}}]}`; a newer version
/// is refused, never misread.
///
/// ```swift
/// let graph = try FilterGraph.parse(specs: ["tone exposure=0.5", "crop aspect=4:5"])
/// let json = graph.canonicalJSON  // the same bytes for the same graph
/// let again = try FilterGraph.decode(json: json, source: "edit.json")
/// try await library.edit(id, with: again)
/// ```
///
/// `FilterGraph` is a `Sendable` value type.
public struct FilterGraph: Sendable, Hashable, Codable {
  /// The `format` of a graph document, `org.darkroom.filter-graph`.
  public static let formatIdentifier = "org.darkroom.filter-graph"
  /// The newest document version this build reads and writes. Version 2 added the
  /// editor's filters (`balance` to `auto`), version 3 `warp`; a graph is written with the
  /// oldest version that has all its filters (``documentVersion``), so a graph of older
  /// filters keeps its bytes.
  public static let currentVersion = 3

  /// The version this graph is written with: the newest of its filters' first versions.
  public var documentVersion: Int {
    nodes.map { $0.definition?.since ?? 1 }.max() ?? 1
  }

  /// The steps, applied in order.
  public var nodes: [FilterNode]
  /// A preset's one-line description.
  public var description: String?

  /// A graph of `nodes` (each ``FilterNode`` was checked when it was made).
  public init(nodes: [FilterNode], description: String? = nil) {
    self.nodes = nodes
    self.description = description
  }

  private enum CodingKeys: String, CodingKey { case format, version, nodes, description }

  /// Decodes a graph document, checking its format and version first.
  ///
  /// - Throws: A ``DarkroomError`` of kind `invalidArgument` for another format, a newer
  ///   version or a node that fails its checks; a `DecodingError` for JSON of the wrong
  ///   shape. ``decode(json:source:)`` turns all of these into a ``DarkroomError``.
  public init(from decoder: Decoder) throws {
    let c = try decoder.container(keyedBy: CodingKeys.self)
    _ = try VersionedDocument.checkHeader(
      c, formatKey: .format, versionKey: .version, identifier: Self.formatIdentifier,
      currentVersion: Self.currentVersion, name: "filter graph")
    nodes = try c.decode([FilterNode].self, forKey: .nodes)
    description = try c.decodeIfPresent(String.self, forKey: .description)
  }

  /// Encodes the graph as a versioned document.
  ///
  /// - Throws: Whatever `encoder` throws.
  public func encode(to encoder: Encoder) throws {
    var c = encoder.container(keyedBy: CodingKeys.self)
    try c.encode(Self.formatIdentifier, forKey: .format)
    try c.encode(documentVersion, forKey: .version)
    try c.encode(nodes, forKey: .nodes)
    try c.encodeIfPresent(description, forKey: .description)
  }

  /// Parses a graph document; errors name `source` and say what was wrong.
  ///
  /// - Throws: A ``DarkroomError`` of kind `invalidArgument` about `source`: not JSON, not a
  ///   filter graph, a version newer than ``currentVersion``, or a node that fails its checks.
  public static func decode(json bytes: [UInt8], source: String) throws(DarkroomError)
    -> FilterGraph
  {
    try VersionedDocument.decode(
      FilterGraph.self, json: bytes, source: source, name: "filter graph")
  }

  /// One `--filter` argument: a preset name, a path to a graph `.json` file, or
  /// `OP key=value ...` (positional values fill the filter's parameters in order).
  ///
  /// ```swift
  /// let warm = try FilterGraph.parse(spec: "tone warmth=0.3 saturation=0.1")
  /// let square = try FilterGraph.parse(spec: "crop aspect=1:1")
  /// let quarter = try FilterGraph.parse(spec: "rotate 90")  // positional
  /// let mono = try FilterGraph.parse(spec: "mono")  // a preset
  /// ```
  ///
  /// `presets` are a library's own (``Library/userPresets()``), taken by name after the
  /// built-in ones.
  ///
  /// - Throws: A ``DarkroomError`` of kind `invalidArgument` for an empty spec, an unknown
  ///   filter or parameter, too many values or a value the filter refuses; for a `.json`
  ///   path, what `readWholeFile(_:)` and ``decode(json:source:)`` throw. Without
  ///   `readingFiles` (specs from a network client), a path is `invalidArgument`.
  public static func parse(
    spec: String, readingFiles: Bool = true, presets: [String: FilterGraph] = [:]
  ) throws(DarkroomError) -> FilterGraph {
    let words = spec.split(whereSeparator: \.isWhitespace).map(String.init)
    guard let first = words.first else {
      throw DarkroomError(.invalidArgument, "empty filter specification")
    }
    if words.count == 1, let preset = Presets.named(first) ?? presets[first.lowercased()] {
      return preset
    }
    if first.hasSuffix(".json") || first.contains("/") {
      guard readingFiles else {
        throw DarkroomError(.invalidArgument, "a filter is a preset or OP key=value, not a file")
      }
      return try decode(json: InputFile.readAll(first), source: first)
    }
    guard let filter = Filters.named(first) else {
      return FilterGraph(nodes: [try FilterNode(first)])
    }
    var params: [String: FilterValue] = [:]
    var position = 0
    for word in words.dropFirst() {
      if let equals = word.firstIndex(of: "=") {
        params[String(word[..<equals])] = value(String(word[word.index(after: equals)...]))
      } else {
        guard position < filter.parameters.count else {
          throw DarkroomError(
            .invalidArgument,
            "Too many values for \(filter.name): it takes \(filter.parameters.map(\.name).joined(separator: " "))"
          )
        }
        params[filter.parameters[position].name] = value(word)
        position += 1
      }
    }
    return FilterGraph(nodes: [try FilterNode(filter.name, params)])
  }

  private static func value(_ text: String) -> FilterValue {
    Double(text).map { .number($0) } ?? .text(text)
  }

  /// The graph of several `--filter` arguments, in order.
  ///
  /// - Throws: The first ``DarkroomError`` that `parse(spec:)` throws.
  public static func parse(
    specs: [String], readingFiles: Bool = true, presets: [String: FilterGraph] = [:]
  ) throws(DarkroomError) -> FilterGraph {
    var nodes: [FilterNode] = []
    for spec in specs {
      nodes += try parse(spec: spec, readingFiles: readingFiles, presets: presets).nodes
    }
    return FilterGraph(nodes: nodes)
  }

  /// Stable bytes for the same graph: sorted keys, shortest round-trip numbers.
  public var canonicalJSON: [UInt8] {
    var copy = self
    copy.description = nil
    return Canonical.json(copy)
  }

  /// Refuses a graph read leniently from storage that this build cannot render: an unknown
  /// filter, or a value out of its range (`version` names the edit in the message).
  func validate(source: String, version: Int) throws(DarkroomError) {
    for node in nodes {
      do {
        _ = try FilterNode(node.op, node.params)
      } catch {
        throw DarkroomError(
          .invalidArgument, file: source,
          "version \(version) of this edit cannot be rendered by this darkroom: \(error.message)")
      }
    }
  }

  /// The size of the graph's result for an upright image `width` x `height`, told from the
  /// sizes alone (nothing is decoded); nil when a step's cannot be told.
  func outputSize(width: Int, height: Int) -> (width: Int, height: Int)? {
    var size = (width: width, height: height)
    for (filter, arguments) in steps where filter.pointwise(arguments) == nil {
      switch filter.name {
      case FlipFilter.name, PerspectiveFilter.name: continue
      case WarpFilter.name:
        size = WarpFilter.outputSize(arguments, width: size.width, height: size.height)
      case RotateFilter.name:
        if Int(arguments.number("angle") ?? 90) % 180 != 0 { size = (size.height, size.width) }
      case CropFilter.name:
        guard let cropped = CropFilter.size(arguments, width: size.width, height: size.height)
        else { return nil }
        size = cropped
      default: return nil
      }
    }
    return size
  }

  /// The graph for the image `scale` times the size of the one it was made for: crops in
  /// pixels (`unit=px`) and lengths in pixels (a radius: ``FilterParameter/isPixels``)
  /// scaled, rounded crops, radii kept in their range; everything else is in proportions
  /// already.
  func scalingPixels(by scale: Double) throws(DarkroomError) -> FilterGraph {
    guard scale != 1 else { return self }
    return try FilterGraph(
      nodes: nodes.map { node throws(DarkroomError) in
        guard let definition = node.definition else { return node }
        var params = node.params
        if node.op == CropFilter.name, node.params["unit"] == .text("px") {
          for side in ["x", "y", "width", "height"] {
            if case .number(let value)? = params[side] {
              params[side] = .number((value * scale).rounded())
            }
          }
        }
        for parameter in definition.parameters where parameter.isPixels {
          guard case .number(let value)? = params[parameter.name],
            case .number(let range) = parameter.kind
          else { continue }
          params[parameter.name] = .number(
            min(range.upperBound, max(range.lowerBound, value * scale)))
        }
        return params == node.params ? node : try FilterNode(node.op, params)
      }, description: description)
  }

  /// Whether every step works top to bottom, so the source can be read sequentially.
  var streams: Bool { nodes.allSatisfy { $0.definition?.streams ?? false } }

  /// Whether every step is pointwise or only moves whole pixels, so that the graph can run
  /// on the stored image as it is decoded (``apply(toStored:orientation:materialize:)``).
  var foldsGeometry: Bool {
    steps.allSatisfy { Self.folds($0, $1) }
  }

  /// Whether a step is pointwise or only moves whole pixels (it folds into the stored image).
  private static func folds(_ filter: any FilterDefinition.Type, _ arguments: FilterArguments)
    -> Bool
  {
    filter.pointwise(arguments) != nil || filter.folding(arguments) != nil
  }

  /// The graph cut before its first step that does not fold (``foldsGeometry``): the steps
  /// before it can run on the stored image as it is decoded, the rest on the upright result.
  /// (A graph that folds whole is all `folding`; one that starts with a neighbourhood filter
  /// all `rest`.)
  var splitAtFirstUnfolding: (folding: FilterGraph, rest: FilterGraph) {
    let cut =
      nodes.firstIndex { node in
        guard let filter = node.definition else { return true }
        return !Self.folds(filter, FilterArguments(values: node.params))
      } ?? nodes.endIndex
    return (
      FilterGraph(nodes: Array(nodes[..<cut]), description: description),
      FilterGraph(nodes: Array(nodes[cut...]), description: description)
    )
  }

  /// The nodes this build knows, with their arguments; rendering skips the others (a graph
  /// read leniently is checked by ``validate(source:version:)`` first).
  private var steps: [(filter: any FilterDefinition.Type, arguments: FilterArguments)] {
    nodes.compactMap { node in node.definition.map { ($0, FilterArguments(values: node.params)) } }
  }

  /// The graph on the stored image as it is decoded (top to bottom is enough): the same
  /// pixels as ``apply(to:)`` on the image turned upright by `orientation`, in 8-bit sRGB.
  ///
  /// The orientation and every crop, turn and flip fold into one ``Placement``; the source
  /// is cut to its rectangle first, converted and put through the pointwise plan, and only
  /// then, if it must move, computed into memory by `materialize` and mirrored and turned.
  /// Requires ``foldsGeometry``.
  func apply(
    toStored image: VipsImage, orientation: Orientation,
    materialize: (VipsImage) throws(DarkroomError) -> VipsImage
  ) throws(DarkroomError) -> VipsImage {
    var placement = Placement(
      storedWidth: image.width, storedHeight: image.height, orientation: orientation)
    var plan = PointwisePlan()
    for (filter, arguments) in steps {
      if let steps = filter.pointwise(arguments) {
        for step in steps { plan.append(step) }
      } else if let fold = filter.folding(arguments) {
        try fold(&placement, image.source)
        plan.barrier()
      } else {
        throw DarkroomError(
          .engine, file: image.source, "\(filter.name) cannot run on the stored image (a bug)")
      }
    }
    var result = image
    if !placement.isWhole(storedWidth: image.width, storedHeight: image.height) {
      result = try result.cropped(
        left: placement.left, top: placement.top, width: placement.width,
        height: placement.height)
    }
    var grey = false
    let finalTable = plan.takeFinalGreyTable()
    result = try plan.run(on: result.srgb(), grey: &grey)
    if placement.movesPixels {
      result = try materialize(result)
      if placement.mirrored { result = try result.flipped(vertically: false) }
      if placement.quarterTurns != 0 {
        result = try result.rotated(quarterTurns: placement.quarterTurns)
      }
    }
    return grey ? try result.greyToRGB(through: finalTable) : result
  }

  /// The graph as one table on a grey band, when that is all it is: every step pointwise,
  /// the first making one grey band weighted by `weights`, the rest tables (noir). The steps
  /// are planned as ``apply(to:)`` plans them; a video whose luma is coded with `weights`
  /// runs the table on its luma plane (``VideoTranscode``). Nil for any other graph.
  func greyTable(weights: [Double]) -> [UInt8]? {
    var plan = PointwisePlan()
    for (filter, arguments) in steps {
      guard let steps = filter.pointwise(arguments) else { return nil }
      for step in steps { plan.append(step) }
    }
    guard case .grey(let first)? = plan.steps.first, first == weights else { return nil }
    var table = (0...255).map { UInt8($0) }
    for step in plan.steps.dropFirst() {
      guard case .table(let next) = step else { return nil }
      table = table.map { next[Int($0)] }
    }
    return table
  }

  /// The graph as libvips operations on an upright 8-bit sRGB image.
  ///
  /// Pointwise filters are planned together (`PointwisePlan`); each geometric filter runs
  /// after the pointwise steps before it, as the graph orders them. The image is consumed:
  /// an input in memory is freed once the first filter that copies it has its copy (a 24 MP
  /// panel peaked 67 MB lower).
  func apply(to image: consuming VipsImage) throws(DarkroomError) -> VipsImage {
    var result = image
    var grey = false
    var plan = PointwisePlan()
    for (filter, arguments) in steps {
      if let steps = filter.pointwise(arguments) {
        for step in steps { plan.append(step) }
        continue
      }
      result = try plan.run(on: result, grey: &grey)
      plan = PointwisePlan()
      result = try filter.apply(arguments, to: result)
    }
    result = try plan.run(on: result, grey: &grey)
    return grey ? try result.greyToRGB() : result
  }
}
