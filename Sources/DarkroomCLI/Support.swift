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
func jsonText<T: Encodable>(_ value: T, pretty: Bool = true) throws -> String {
  let encoder = JSONEncoder()
  encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
  if pretty { encoder.outputFormatting.insert(.prettyPrinted) }
  return String(decoding: try encoder.encode(value), as: UTF8.self)
}

/// Standard input, read whole with a bound: an image piped in must fit in memory.
enum StandardInput {
  static let limit = 1 << 30

  static func readAll() throws -> [UInt8] {
    var bytes: [UInt8] = []
    while let chunk = try FileHandle.standardInput.read(upToCount: 1 << 20), !chunk.isEmpty {
      bytes += chunk
      guard bytes.count <= limit else {
        throw DarkroomError(
          .tooLarge, file: "-", "standard input is larger than \(limit >> 20) MiB")
      }
    }
    guard !bytes.isEmpty else { throw DarkroomError(.empty, file: "-", "standard input is empty") }
    return bytes
  }
}
