import FoundationEssentials

/// What an edit did, stored beside its result, as PhotoKit's `PHAdjustmentData`: the graph,
/// the original it was rendered from, and the result it produced. Its canonical JSON (sorted
/// keys, shortest round-trip numbers) is the same bytes for the same edit.
public struct AdjustmentData: Sendable, Equatable, Codable {
  public static let formatIdentifier = "org.darkroom.adjustment-data"
  public static let currentVersion = 1

  public struct Original: Sendable, Equatable, Codable {
    public var sha256: String
    public var byteSize: Int
    public var format: String
    public var fileName: String
  }

  public struct Result: Sendable, Equatable, Codable {
    public var sha256: String
    public var format: String
    public var quality: Int
  }

  public var graph: FilterGraph
  public var original: Original
  public var result: Result
  /// 1 for the first edit of an original, then one more for each re-edit.
  public var version: Int
  /// The result hash of the version before this one; nil for version 1.
  public var previous: String?
  /// When the edit was made, ISO 8601 in UTC.
  public var created: String
  public var software: String

  private enum CodingKeys: String, CodingKey {
    case format, formatVersion, graph, original, result, version, previous, created, software
  }

  public init(
    graph: FilterGraph, original: Original, result: Result, version: Int, previous: String?,
    created: String, software: String = "darkroom \(DarkroomVersion.string)"
  ) {
    self.graph = graph
    self.original = original
    self.result = result
    self.version = version
    self.previous = previous
    self.created = created
    self.software = software
  }

  public init(from decoder: Decoder) throws {
    let c = try decoder.container(keyedBy: CodingKeys.self)
    _ = try VersionedDocument.checkHeader(
      c, formatKey: .format, versionKey: .formatVersion, identifier: Self.formatIdentifier,
      currentVersion: Self.currentVersion, name: "adjustment data")
    graph = try c.decode(FilterGraph.self, forKey: .graph)
    original = try c.decode(Original.self, forKey: .original)
    result = try c.decode(Result.self, forKey: .result)
    version = try c.decode(Int.self, forKey: .version)
    previous = try c.decodeIfPresent(String.self, forKey: .previous)
    created = try c.decode(String.self, forKey: .created)
    software = try c.decode(String.self, forKey: .software)
  }

  public func encode(to encoder: Encoder) throws {
    var c = encoder.container(keyedBy: CodingKeys.self)
    try c.encode(Self.formatIdentifier, forKey: .format)
    try c.encode(Self.currentVersion, forKey: .formatVersion)
    try c.encode(graph, forKey: .graph)
    try c.encode(original, forKey: .original)
    try c.encode(result, forKey: .result)
    try c.encode(version, forKey: .version)
    try c.encode(previous, forKey: .previous)
    try c.encode(created, forKey: .created)
    try c.encode(software, forKey: .software)
  }

  public var canonicalJSON: [UInt8] { Canonical.json(self) }

  /// Parses adjustment data; errors name `source`.
  ///
  /// `lenient` is for documents a library stored: a filter this build does not know, or a
  /// value outside today's range, is kept as data (shown by `history`, refused only when
  /// rendered), so that `revert` and `history` work across releases. Adjustment data a user
  /// hands in is checked strictly.
  public static func decode(json bytes: [UInt8], source: String, lenient: Bool = false)
    throws(DarkroomError) -> AdjustmentData
  {
    try VersionedDocument.decode(
      AdjustmentData.self, json: bytes, source: source, name: "adjustment data",
      lenient: lenient)
  }

  /// An XMP packet carrying this edit (without its result, which the file itself is), so
  /// that an edited file describes itself.
  var xmpPacket: [UInt8] {
    struct Embedded: Encodable {
      var graph: FilterGraph
      var original: Original
      var version: Int
      var created: String
      var software: String
    }
    let json = String(
      decoding: Canonical.json(
        Embedded(
          graph: graph, original: original, version: version, created: created, software: software)),
      as: UTF8.self)
    let escaped = json.replacing("&", with: "&amp;").replacing("\"", with: "&quot;")
      .replacing("<", with: "&lt;").replacing(">", with: "&gt;")
    let packet = """
      <?xpacket begin="\u{FEFF}" id="W5M0MpCehiHzreSzNTczkc9d"?>
      <x:xmpmeta xmlns:x="adobe:ns:meta/">
       <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
        <rdf:Description rdf:about=""
          xmlns:darkroom="https://darkroom.dev/ns/adjustment-data/1.0/"
          darkroom:AdjustmentData="\(escaped)"/>
       </rdf:RDF>
      </x:xmpmeta>
      <?xpacket end="w"?>
      """
    return Array(packet.utf8)
  }
}
