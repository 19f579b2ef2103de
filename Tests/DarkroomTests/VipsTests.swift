import Foundation
import Testing

@testable import Darkroom

@Suite("libvips binding", .timeLimit(.minutes(10)), .offThePool)
struct VipsTests {
  /// Runs `cc -fsyntax-only $(pkg-config --cflags vips) Tests/ShimCheck/check.c` (plus
  /// `extra`), returning the exit status and what the compiler printed.
  static func compileShimCheck(_ extra: [String] = []) throws -> (Int32, String) {
    let flags = Process()
    flags.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    flags.arguments = ["pkg-config", "--cflags", "vips"]
    let pipe = Pipe()
    flags.standardOutput = pipe
    try flags.run()
    let cflags = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    flags.waitUntilExit()
    try #require(
      flags.terminationStatus == 0, "pkg-config finds vips (apt-get install libvips-dev)")
    let compiler = Process()
    compiler.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    compiler.arguments =
      ["cc", "-fsyntax-only"]
      + cflags.split(separator: " ").map(String.init).filter {
        !$0.isEmpty && $0 != "\n"
      }.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) } + extra
      + [Fixture.root.appendingPathComponent("Tests/ShimCheck/check.c").path]
    let errors = Pipe()
    compiler.standardError = errors
    try compiler.run()
    let output = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    compiler.waitUntilExit()
    return (compiler.terminationStatus, output)
  }

  @Test("the shim's libvips declarations match <vips/vips.h>; a wrong one is refused")
  func shimDeclarationsMatchHeaders() throws {
    let (status, output) = try Self.compileShimCheck()
    #expect(status == 0, "\(output)")
    let (wrong, message) = try Self.compileShimCheck(["-DDR_SHIM_CHECK_SELF_TEST"])
    #expect(wrong != 0)
    #expect(message.contains("vips_version differs from <vips/vips.h>"), "\(message)")
  }

  @Test("a loop through libvips under VIPS_LEAK=1 reports no leaked object or memory")
  func noLeaks() throws {
    let folder = try Fixture.temporaryFolder()
    let image = try VipsImage.thumbnail(
      path: Fixture.sample("orientation-6.jpg"), .init(width: 200, height: 200))
    var files: [String] = []
    for (index, suffix) in [".webp", ".tif", ".gif", ".png"].enumerated() {
      files.append(try folder.write("x\(index)\(suffix)", try image.encode(suffix: suffix)))
    }
    let arguments =
      ["info"] + Array(repeating: files, count: 25).flatMap { $0 } + [folder.file("gone.tif")]
    let result = try CLI.run(arguments, environment: ["VIPS_LEAK": "1"])
    #expect(result.status == 1)  // the missing file
    #expect(result.stdout.components(separatedBy: "Display size").count == 101)
    // libvips prints "N objects alive" / "memory: high-water mark" lines only for leaks.
    let report = result.stderr.split(separator: "\n").filter {
      !$0.contains("gone.tif") && !$0.hasPrefix("memory: high-water mark")
    }
    #expect(report.isEmpty, "\(report)")
  }

  @Test("libvips errors become Swift errors carrying libvips' own message and the file")
  func errorsCarryMessage() throws {
    let folder = try Fixture.temporaryFolder()
    let jpeg = try Fixture.bytes(Fixture.sample("orientation-1.jpg"))
    let path = try folder.write("cut.jpg", Array(jpeg.prefix(jpeg.count / 2)))
    // Through the attribution gate, as every caller in the engine: other tests decode in
    // this process at the same time, and libvips' error buffer is one per process.
    let error = #expect(throws: DarkroomError.self) {
      try Vips.attributingErrors(file: path) { () throws(DarkroomError) in
        _ = try VipsImage.thumbnail(path: path, .init(width: 100, height: 100))
          .encode(suffix: ".png")
      }
    }
    // The decoder's complaint about the data: the file's fault, not libvips' (`engine`).
    #expect(error?.kind == .corrupt)
    #expect(error?.description.contains("cut.jpg") == true)
    #expect(
      error?.message.contains("VipsJpeg") == true || error?.message.contains("jpeg") == true,
      "\(error?.message ?? "")")
  }

  @Test("libvips starts once even when many tasks race to start it")
  func concurrentStart() async throws {
    try await withThrowingTaskGroup(of: Int.self) { group in
      for _ in 0..<8 {
        group.addTask {
          try VipsImage.thumbnail(path: Fixture.sample("gps.jpg"), .init(width: 64, height: 64))
            .width
        }
      }
      for try await width in group { #expect(width == 64) }
    }
  }
}
