import FoundationEssentials

/// Darkroom's JSON documents (filter graphs, adjustment data) start with a format identifier
/// and a version. One that is not ours, or newer than this build reads, is refused with a
/// message, never misread.
enum VersionedDocument {
  /// Checks the identifier and version of a document being decoded; returns the version.
  static func checkHeader<Key: CodingKey>(
    _ container: KeyedDecodingContainer<Key>, formatKey: Key, versionKey: Key,
    identifier: String, currentVersion: Int, name: String
  ) throws -> Int {
    let format = try container.decodeIfPresent(String.self, forKey: formatKey)
    guard format == identifier else {
      throw DarkroomError(
        .invalidArgument,
        "not Darkroom \(name): format is \(format.map { "'\($0)'" } ?? "missing"), expected '\(identifier)'"
      )
    }
    let version = try container.decode(Int.self, forKey: versionKey)
    guard (1...currentVersion).contains(version) else {
      throw DarkroomError(
        .invalidArgument,
        "\(name) version \(version) is newer than this darkroom reads (\(currentVersion)); upgrade darkroom. Nothing was changed"
      )
    }
    return version
  }

  /// Decodes a document; errors name `source` and say what was wrong.
  static func decode<T: Decodable>(
    _ type: T.Type, json bytes: [UInt8], source: String, name: String, lenient: Bool = false
  )
    throws(DarkroomError) -> T
  {
    do {
      let decoder = JSONDecoder()
      decoder.userInfo[.lenient] = lenient
      return try decoder.decode(type, from: Data(bytes))
    } catch let error as DarkroomError {
      throw error.file == nil ? error.about(source) : error
    } catch let DecodingError.dataCorrupted(context) where context.codingPath.isEmpty {
      throw DarkroomError(
        .invalidArgument, file: source, "not valid JSON: \(context.debugDescription)")
    } catch {
      throw DarkroomError(.invalidArgument, file: source, "not valid \(name): \(error)")
    }
  }
}

extension CodingUserInfoKey {
  /// Set on documents Darkroom stored itself (adjustment data in a library): they are read
  /// as data, and what this build cannot check is kept rather than refused. What a user
  /// hands in is checked strictly.
  static let lenient = CodingUserInfoKey(rawValue: "org.darkroom.lenient")!
}

/// Canonical JSON: the same value always gives the same bytes (sorted keys, shortest
/// round-trip numbers).
enum Canonical {
  static func json<T: Encodable>(_ value: T) -> [UInt8] {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    // Encoding plain Codable values into memory does not fail.
    return (try? Array(encoder.encode(value))) ?? []
  }
}
