import Darkroom
import Foundation

/// Thrown by a command after it has reported its failures itself; carries the exit status.
struct WorkFailed: Error {
  var status: Int32 = 1
}

extension FileHandle {
  func write(_ text: String) {
    write(Data(text.utf8))
  }
}

/// One stderr line per problem, in the form the README documents.
func reportError(_ error: Error) {
  FileHandle.standardError.write("darkroom: \(error)\n")
}

/// Encodes a value as pretty, key-sorted JSON, for `--json` output.
func jsonText<T: Encodable>(_ value: T) throws -> String {
  let encoder = JSONEncoder()
  encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
  return String(decoding: try encoder.encode(value), as: UTF8.self)
}
