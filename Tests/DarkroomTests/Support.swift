import Foundation
import Testing

@testable import Darkroom

/// Paths and fixtures shared by the tests. Fixtures are the committed `Samples/` (made by
/// `Samples/make-samples.py`) or bytes built by the tests themselves.
enum Fixture {
  static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()

  static func sample(_ name: String) -> String {
    root.appendingPathComponent("Samples").appendingPathComponent(name).path
  }

  static func bytes(_ path: String) throws -> [UInt8] {
    Array(try Data(contentsOf: URL(fileURLWithPath: path)))
  }

  /// A new empty folder, removed when the returned scope ends.
  static func temporaryFolder() throws -> TemporaryFolder {
    try TemporaryFolder()
  }

  /// Upright colours of the sample scene's corners, as `make-samples.py` draws them.
  static let corners: [(name: String, rgb: [Double])] = [
    ("top-left", [220, 30, 30]), ("top-right", [30, 170, 60]),
    ("bottom-left", [30, 60, 220]), ("bottom-right", [240, 210, 40]),
  ]
}

/// A folder removed when the last reference goes; immutable, so shared freely.
final class TemporaryFolder: Sendable {
  let url: URL
  var path: String { url.path }

  init() throws {
    url = FileManager.default.temporaryDirectory
      .appendingPathComponent("darkroom-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  }

  func file(_ name: String) -> String { url.appendingPathComponent(name).path }

  func write(_ name: String, _ bytes: [UInt8]) throws -> String {
    let path = file(name)
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    return path
  }

  deinit { try? FileManager.default.removeItem(at: url) }
}

/// The result of running the `darkroom` binary.
struct CLIResult {
  var status: Int32
  var stdout: String
  var stderr: String
  var stdoutData: Data
}

enum CLI {
  /// The `darkroom` binary that `swift build`/`swift test` put beside the test bundle.
  static let binary: String = {
    var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    if let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
      dir = URL(fileURLWithPath: exe).deletingLastPathComponent()
    }
    // The runner may live inside a .xctest bundle directory on some platforms.
    for candidate in [
      dir, dir.deletingLastPathComponent(),
      dir.deletingLastPathComponent().deletingLastPathComponent(),
    ] {
      let path = candidate.appendingPathComponent("darkroom").path
      if FileManager.default.isExecutableFile(atPath: path) { return path }
    }
    return Fixture.root.appendingPathComponent(".build/debug/darkroom").path
  }()

  /// Runs `darkroom` (or another `executable`) with `arguments` and waits for it.
  /// (Without thumbnails made in the background after a scan: each test that wants them
  /// asks, so that no pass outlives its test or races its checks.)
  static func run(
    _ arguments: [String], stdin: Data? = nil, cwd: String? = nil,
    environment: [String: String] = [:], executable: String = binary
  ) throws -> CLIResult {
    let folder = try TemporaryFolder()
    let out = folder.file("stdout")
    let err = folder.file("stderr")
    _ = FileManager.default.createFile(atPath: out, contents: nil)
    _ = FileManager.default.createFile(atPath: err, contents: nil)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.environment = testEnvironment.merging(environment) { $1 }
    if let cwd { process.currentDirectoryURL = URL(fileURLWithPath: cwd) }
    process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: out))
    process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: err))
    if let stdin {
      let input = try folder.write("stdin", Array(stdin))
      process.standardInput = try FileHandle(forReadingFrom: URL(fileURLWithPath: input))
    } else {
      process.standardInput = FileHandle.nullDevice
    }
    try process.run()
    process.waitUntilExit()
    let outData = try Data(contentsOf: URL(fileURLWithPath: out))
    return CLIResult(
      status: process.terminationReason == .exit
        ? process.terminationStatus : 128 + process.terminationStatus,
      stdout: String(decoding: outData, as: UTF8.self),
      stderr: String(decoding: try Data(contentsOf: URL(fileURLWithPath: err)), as: UTF8.self),
      stdoutData: outData)
  }
}

/// Builds EXIF blocks byte by byte, so tests can make damaged and hostile metadata.
enum ExifBuilder {
  struct Entry {
    var tag: UInt16
    var type: UInt16
    var count: UInt32
    /// Four bytes inline, or an offset from the TIFF header.
    var value: [UInt8]
  }

  static func short(_ tag: UInt16, _ value: UInt16) -> Entry {
    Entry(tag: tag, type: 3, count: 1, value: le(value) + [0, 0])
  }

  static func le(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
  static func le(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8((v >> (8 * $0)) & 0xFF) } }

  /// A little-endian TIFF block, "Exif\0\0" first, with one IFD at offset 8.
  static func block(_ entries: [Entry], nextIFD: UInt32 = 0, trailing: [UInt8] = []) -> [UInt8] {
    var tiff: [UInt8] = [0x49, 0x49, 0x2A, 0x00] + le(UInt32(8))
    tiff += le(UInt16(entries.count))
    for e in entries { tiff += le(e.tag) + le(e.type) + le(e.count) + e.value }
    tiff += le(nextIFD) + trailing
    return Array("Exif\0\0".utf8) + tiff
  }

  /// `jpeg` with its APP1 segments replaced by one holding `exif`.
  static func jpeg(_ jpeg: [UInt8], replacingExifWith exif: [UInt8]) -> [UInt8] {
    var out: [UInt8] = [0xFF, 0xD8]
    let length = exif.count + 2
    out += [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + exif
    var position = 2
    while position + 4 <= jpeg.count, jpeg[position] == 0xFF, jpeg[position + 1] != 0xDA {
      let size = Int(jpeg[position + 2]) << 8 | Int(jpeg[position + 3])
      if jpeg[position + 1] != 0xE1 { out += jpeg[position..<position + 2 + size] }
      position += 2 + size
    }
    return out + jpeg[position...]
  }
}

/// The environment of the processes the tests start: this one's, with no thumbnail pass
/// started in the background by `scan` or `serve` (`DARKROOM_NO_BACKGROUND`).
let testEnvironment = ProcessInfo.processInfo.environment.merging([
  "DARKROOM_NO_BACKGROUND": "1"
]) { $1 }
