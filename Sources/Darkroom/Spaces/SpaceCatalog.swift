import FoundationEssentials
import GRDB

#if canImport(Glibc)
  import Glibc
#endif

/// One asset of a space, as its catalog row holds it (sealed; see ``SpaceCatalog``).
struct SpaceAsset: Sendable, Codable, Equatable {
  /// A random id, fixed for the asset's life (32 hex digits).
  var id: String
  /// The name of the file it was added from.
  var name: String
  /// When it was added (seconds since 1970).
  var added: Double
  /// The original's format as Darkroom names it ("jpeg", "png", "heif", ...).
  var format: String
  /// The original's upright size in pixels.
  var width: Int
  var height: Int
  /// The original's size in bytes.
  var byteSize: Int
  /// A keyed hash of the original's bytes: equal for equal content in this space only.
  var identity: String
  /// The encrypted objects: the original, the edit's adjustment data and its full-size result.
  var original: String
  var adjustments: String?
  var rendered: String?
  /// 0 for an unedited asset, else the current edit's version.
  var editVersion: Int
  var trashed: Bool
  /// When it went to the trash (seconds since 1970); nil for an asset trashed before spaces
  /// kept the time, or not trashed.
  var trashedAt: Double?
  /// Where a motion photo's video is in the original (nil for a still alone, and for assets
  /// added before spaces kept it).
  var motionVideo: FileRange? = nil
  /// A video's length in seconds; nil for a photo (and for every asset added before spaces
  /// took videos).
  var duration: Double? = nil
  /// The current edit's result's size in pixels (upright: a result is written turned), which
  /// a crop or a turn changes; nil for an unedited asset, and for one edited before spaces
  /// kept it (its original's size is shown then).
  var editedWidth: Int? = nil
  var editedHeight: Int? = nil

  /// Whether it is a video (MP4, MOV, M4V, 3GP).
  var isVideo: Bool { duration != nil }
}

/// What a space keeps of an original's header beside its bytes: a photo's or a video's.
struct SpaceMedia {
  var format: String
  /// The upright size in pixels.
  var width: Int
  var height: Int
  var motionVideo: FileRange?
  /// A video's length in seconds; nil for a photo.
  var duration: Double?

  init(_ metadata: AssetMetadata) {
    (format, width, height) = (metadata.format, metadata.displayWidth, metadata.displayHeight)
    (motionVideo, duration) = (metadata.motionVideo, nil)
  }

  init(_ video: VideoHeader) {
    (format, width, height) = (video.format, video.displayWidth, video.displayHeight)
    (motionVideo, duration) = (nil, max(0, video.duration))
  }

  /// The header of `source` (`head`, its first bytes, already read): a video's container,
  /// read as far as it needs (its index may be at the end), else an image's from `image()`.
  ///
  /// - Throws: what ``VideoHeader`` or `image` throws.
  static func read(
    head: ArraySlice<UInt8>, source: ByteSource, name: String,
    image: () throws(DarkroomError) -> AssetMetadata
  ) throws(DarkroomError) -> SpaceMedia {
    guard VideoHeader.recognises(head.prefix(64)) else { return SpaceMedia(try image()) }
    return SpaceMedia(try VideoHeader.read(source, name: name))
  }
}

/// A space's catalog: rows in one SQLite table that all the spaces of a folder share, each
/// row sealed under one space's catalog key with its random id as associated data. A space
/// finds its rows by trying to open every row (a failed open costs about a microsecond), and
/// keeps its index in memory while it is open. The file shows how many rows there are and
/// their padded sizes, not which space owns which (docs/spaces.md).
final class SpaceCatalog: Sendable {
  /// What one row holds: an asset, or a list of objects to remove if the process that wrote
  /// it died (recovery; see ``Space``).
  struct Body: Codable {
    var asset: SpaceAsset?
    var pending: [String]?
    /// A key rotation under way, in a row of the old key: the new key's bytes.
    var rotation: [UInt8]?
    /// A key rotation switched to this key, in a row of the new key: the old key's bytes,
    /// until everything the old key sealed is removed.
    var rotatedFrom: [UInt8]?
  }

  let queue: DatabaseQueue
  static let rowBlock = 256

  init(path: String) throws(DarkroomError) {
    var configuration = Configuration()
    configuration.busyMode = .timeout(60)
    configuration.prepareDatabase { db in
      try db.execute(sql: "PRAGMA synchronous = FULL; PRAGMA secure_delete = ON")
    }
    do {
      queue = try DatabaseQueue(path: path, configuration: configuration)
      chmod(path, 0o600)
      try queue.write { db in
        try db.execute(
          sql: "CREATE TABLE IF NOT EXISTS row (id BLOB PRIMARY KEY, body BLOB NOT NULL)"
            + " WITHOUT ROWID")
      }
    } catch {
      throw DarkroomError(.io, file: path, "cannot open the spaces' catalog: \(error)")
    }
  }

  static func associatedData(_ id: [UInt8]) -> [UInt8] { Array("darkroom row 1\0".utf8) + id }

  /// `body` sealed for row `id`: its JSON, length-prefixed and zero-padded to a multiple of
  /// 256 bytes, so that a row's size tells little of the name inside.
  static func seal(_ body: Body, id: [UInt8], key: SecretKey) -> [UInt8] {
    let json = Canonical.json(body)
    var plain = littleEndianBytes(UInt64(json.count), 4) + json
    let padded = (plain.count + rowBlock - 1) / rowBlock * rowBlock
    plain += [UInt8](repeating: 0, count: padded - plain.count)
    let nonce = Sodium.random(Sodium.nonceBytes)
    defer { Sodium.wipe(&plain) }
    return nonce + Sodium.seal(plain, key: key, nonce: nonce, data: associatedData(id))
  }

  /// Every row that opens under `key`, by row id.
  func load(key: SecretKey) throws(DarkroomError) -> [(id: [UInt8], body: Body)] {
    let rows: [(id: [UInt8], sealed: [UInt8])]
    do {
      rows = try queue.read { db in
        try Row.fetchAll(db, sql: "SELECT id, body FROM row").map {
          (Array(($0["id"] as Data?) ?? Data()), Array(($0["body"] as Data?) ?? Data()))
        }
      }
    } catch {
      throw DarkroomError(.io, "cannot read the spaces' catalog: \(error)")
    }
    var mine: [(id: [UInt8], body: Body)] = []
    for row in rows where row.sealed.count > Sodium.nonceBytes {
      let nonce = Array(row.sealed[0..<Sodium.nonceBytes])
      guard
        var plain = Sodium.open(
          row.sealed[Sodium.nonceBytes...], key: key, nonce: nonce,
          data: Self.associatedData(row.id))
      else { continue }
      defer { Sodium.wipe(&plain) }
      let length = Int(readLittleEndian(plain, 0, 4))
      guard length + 4 <= plain.count,
        let body = try? JSONDecoder().decode(Body.self, from: Data(plain[4..<4 + length]))
      else {
        throw DarkroomError(.corrupt, "a catalog row of this space opens but does not parse")
      }
      mine.append((row.id, body))
    }
    return mine
  }

  /// Writes and deletes rows in one transaction: a body, or nil to delete the row.
  func commit(_ changes: [(id: [UInt8], body: Body?)], key: SecretKey) throws(DarkroomError) {
    let sealed = changes.map { change in
      (change.id, change.body.map { Self.seal($0, id: change.id, key: key) })
    }
    do {
      try queue.write { db in
        for (id, body) in sealed {
          if let body {
            try db.execute(
              sql: "INSERT OR REPLACE INTO row (id, body) VALUES (?, ?)",
              arguments: [Data(id), Data(body)])
          } else {
            try db.execute(sql: "DELETE FROM row WHERE id = ?", arguments: [Data(id)])
          }
        }
      }
    } catch {
      throw DarkroomError(.io, "cannot write the spaces' catalog: \(error)")
    }
  }
}
