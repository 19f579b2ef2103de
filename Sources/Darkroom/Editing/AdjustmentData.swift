import FoundationEssentials

/// What an edit did, stored beside its result, as PhotoKit's `PHAdjustmentData`: the graph,
/// the original it was rendered from, and the result it produced. Its canonical JSON (sorted
/// keys, shortest round-trip numbers) is the same bytes for the same edit.
///
/// A library keeps it as `.darkroom/adjustments/<result sha256>.json`, so a file's content
/// alone finds its edit. The edited file also carries it as XMP, without ``result`` and
/// ``previous``.
///
/// ```swift
/// let adjustment = try await library.edit(id, with: FilterGraph.parse(spec: "noir"))
/// print(adjustment.version, adjustment.graph.nodes.map(\.text))
/// print(String(decoding: adjustment.canonicalJSON, as: UTF8.self))
/// ```
///
/// `AdjustmentData` is a `Sendable` value type.
public struct AdjustmentData: Sendable, Equatable, Codable {
  /// The `format` of an adjustment data document, `org.darkroom.adjustment-data`.
  public static let formatIdentifier = "org.darkroom.adjustment-data"
  /// The newest document version (`formatVersion`) this build reads and writes; a document
  /// is written with its graph's ``FilterGraph/documentVersion``.
  public static let currentVersion = 3

  /// The original an edit was rendered from. `Original` is a `Sendable` value type.
  public struct Original: Sendable, Equatable, Codable {
    /// The original's content hash: its name in the library's store.
    public var sha256: String
    /// Its size in bytes.
    public var byteSize: Int
    /// Its format, as `AssetMetadata.format` names it (`jpeg`, `heif`, ...).
    public var format: String
    /// Its file name when it was first edited.
    public var fileName: String
  }

  /// The file an edit produced. `Result` is a `Sendable` value type.
  public struct Result: Sendable, Equatable, Codable {
    /// The result's content hash: how a file is recognised as this edit.
    public var sha256: String
    /// Its format, as an ``ImageFormat`` raw value (`jpeg`, `heic`, ...).
    public var format: String
    /// The encoder quality it was written at.
    public var quality: Int
    /// The encoder effort it was written at, 0 (fastest) to 9 (HEIC and AVIF; see
    /// ``ImageFormat/editEffort(pixels:)``); nil for other formats, and for edits made before
    /// efforts were kept (libvips' default then, which they render with again).
    public var effort: Int?
  }

  /// The whole edit, applied to the original: every filter, not only those added last.
  public var graph: FilterGraph
  /// The original the edit was rendered from.
  public var original: Original
  /// The file the edit produced.
  public var result: Result
  /// 1 for the first edit of an original, then one more for each re-edit.
  public var version: Int
  /// The result hash of the version before this one; nil for version 1.
  public var previous: String?
  /// When the edit was made, ISO 8601 in UTC.
  public var created: String
  /// The software that made the edit, such as `darkroom 0.1.0`.
  public var software: String

  private enum CodingKeys: String, CodingKey {
    case format, formatVersion, graph, original, result, version, previous, created, software
  }

  /// Adjustment data from its parts (``Editor`` makes it when it edits).
  package init(
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

  /// Decodes a document, checking its format and version first.
  ///
  /// - Throws: A ``DarkroomError`` of kind `invalidArgument` for another format, a newer
  ///   version or a graph that fails its checks; a `DecodingError` for JSON of the wrong
  ///   shape. ``decode(json:source:lenient:)`` turns all of these into a ``DarkroomError``.
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

  /// Encodes the document with its format and version.
  ///
  /// - Throws: Whatever `encoder` throws.
  public func encode(to encoder: Encoder) throws {
    var c = encoder.container(keyedBy: CodingKeys.self)
    try c.encode(Self.formatIdentifier, forKey: .format)
    // Version 2 holds graphs with version 2's filters; other documents keep version 1, and
    // their bytes.
    try c.encode(graph.documentVersion, forKey: .formatVersion)
    try c.encode(graph, forKey: .graph)
    try c.encode(original, forKey: .original)
    try c.encode(result, forKey: .result)
    try c.encode(version, forKey: .version)
    try c.encode(previous, forKey: .previous)
    try c.encode(created, forKey: .created)
    try c.encode(software, forKey: .software)
  }

  /// Stable bytes for the same adjustment data: sorted keys, shortest round-trip numbers.
  public var canonicalJSON: [UInt8] { Canonical.json(self) }

  /// Parses adjustment data; errors name `source`.
  ///
  /// `lenient` is for documents a library stored: a filter this build does not know, or a
  /// value outside today's range, is kept as data (shown by `history`, refused only when
  /// rendered), so that `revert` and `history` work across releases. Adjustment data a user
  /// hands in is checked strictly.
  ///
  /// - Throws: A ``DarkroomError`` of kind `invalidArgument` about `source`: not JSON, not
  ///   adjustment data, a version newer than ``currentVersion``, or (unless `lenient`) a graph
  ///   that fails its checks.
  public static func decode(json bytes: [UInt8], source: String, lenient: Bool = false)
    throws(DarkroomError) -> AdjustmentData
  {
    try VersionedDocument.decode(
      AdjustmentData.self, json: bytes, source: source, name: "adjustment data",
      lenient: lenient)
  }

  /// An XMP packet carrying this edit (without its result, which the file itself is), so
  /// that an edited file describes itself. The edit of a camera RAW (`original`'s format
  /// `raw`) also says when and with what the photo was taken (`exif:DateTimeOriginal`,
  /// `tiff:Make`, `tiff:Model`): a development carries none of the RAW's EXIF.
  func xmpPacket(original metadata: AssetMetadata? = nil) -> [UInt8] {
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
    var described = ""
    if let metadata, metadata.format == "raw" {
      var facts: [(String, String?)] = [
        ("exif:DateTimeOriginal", metadata.captureDate?.iso8601),
        ("tiff:Make", metadata.cameraMake), ("tiff:Model", metadata.cameraModel),
      ]
      facts = facts.filter { $0.1?.isEmpty == false }
      if !facts.isEmpty {
        described =
          "\n      xmlns:exif=\"\(XMPPacket.exif)\"\n      xmlns:tiff=\"\(XMPPacket.tiff)\""
          + facts.map { "\n      \($0.0)=\"\(XMPSidecar.escaped($0.1 ?? ""))\"" }.joined()
      }
    }
    let escaped = json.replacing("&", with: "&amp;").replacing("\"", with: "&quot;")
      .replacing("<", with: "&lt;").replacing(">", with: "&gt;")
    let packet = """
      <?xpacket begin="\u{FEFF}" id="W5M0MpCehiHzreSzNTczkc9d"?>
      <x:xmpmeta xmlns:x="adobe:ns:meta/">
       <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
        <rdf:Description rdf:about=""
          xmlns:darkroom="\(XMPPacket.darkroom)"\(described)
          darkroom:AdjustmentData="\(escaped)"/>
       </rdf:RDF>
      </x:xmpmeta>
      <?xpacket end="w"?>
      """
    return Array(packet.utf8)
  }
}

extension AdjustmentData {
  /// What the renderer needs of this edit, for the file `name`, whose original's metadata is
  /// `original`.
  ///
  /// - Throws: `unsupportedFormat` for a result format this build does not write.
  func recipe(for name: String, original metadata: AssetMetadata) throws(DarkroomError)
    -> EditRecipe
  {
    guard let format = ImageFormat(rawValue: result.format) else {
      throw DarkroomError(.unsupportedFormat, file: name, "cannot write \(result.format)")
    }
    return EditRecipe(
      graph: graph, version: version, format: format, quality: result.quality,
      effort: result.effort, xmp: xmpPacket(original: metadata))
  }
}
