import Foundation
import Testing

@testable import Darkroom

/// A `darkroom` process started in the background, to be signalled.
final class RunningCLI {
  let process = Process()
  let folder: TemporaryFolder
  let stdout: String
  let stderr: String

  init(_ arguments: [String], environment: [String: String]) throws {
    folder = try TemporaryFolder()
    stdout = folder.file("stdout")
    stderr = folder.file("stderr")
    _ = FileManager.default.createFile(atPath: stdout, contents: nil)
    _ = FileManager.default.createFile(atPath: stderr, contents: nil)
    process.executableURL = URL(fileURLWithPath: CLI.binary)
    process.arguments = arguments
    process.environment = testEnvironment.merging(environment) { $1 }
    process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: stdout))
    process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: stderr))
    process.standardInput = FileHandle.nullDevice
    try process.run()
  }

  var output: String { (try? String(contentsOfFile: stdout, encoding: .utf8)) ?? "" }
  var errors: String { (try? String(contentsOfFile: stderr, encoding: .utf8)) ?? "" }

  /// Waits until `condition` holds, checking every 50 ms, for at most `limit` seconds (a
  /// bound against a hang, not a measurement).
  @discardableResult
  func wait(upTo limit: Double, until condition: () -> Bool) -> Bool {
    let end = Date().addingTimeInterval(limit)
    while Date() < end {
      if condition() { return true }
      usleep(50_000)
    }
    return condition()
  }

  func signal(_ number: Int32) { kill(process.processIdentifier, number) }
}

@Suite("Stopping when asked", .timeLimit(.minutes(10)), .offThePool)
struct SignalTests {
  /// Ten photos, one of which hangs its decoder (the test switch), and a unique marker.
  static func batch() throws -> (TemporaryFolder, marker: String) {
    let folder = try Fixture.temporaryFolder()
    try FileManager.default.createDirectory(
      atPath: folder.file("in"), withIntermediateDirectories: true)
    for index in 0..<10 {
      _ = try folder.write(
        "in/" + (index == 6 ? "photo-6-hangs.jpg" : "photo-\(index).jpg"),
        Fixture.bytes(Fixture.sample("orientation-\(index % 8 + 1).jpg")))
    }
    return (folder, UUID().uuidString)
  }

  static func arguments(_ folder: TemporaryFolder, grace: String) -> [String] {
    [
      "apply", "--jobs", "2", "--grace", grace, "--timeout", "120", "--filter", "noir",
      folder.file("in"), "-o",
      folder.file("out"), "--progress", "json",
    ]
  }

  @Test("SIGTERM after the others are done: the hung file is abandoned after the grace, 143")
  func sigtermAbandonsAfterGrace() throws {
    let (folder, marker) = try Self.batch()
    let run = try RunningCLI(
      Self.arguments(folder, grace: "2"),
      environment: ["DARKROOM_TEST_DECODER_FAULT": "hang=hangs", "DARKROOM_TEST_RUN": marker])
    let nineDone = run.wait(upTo: 60) {
      run.output.components(separatedBy: "\"status\":\"done\"").count - 1 == 9
    }
    #expect(nineDone, "\(run.output)\(run.errors)")
    let signalled = Date()
    run.signal(SIGTERM)
    // Ended once the 2 s grace was over (not at once, and not at the 120 s time limit); the
    // 30 s bound is against a hang, not a measure of speed.
    let ended = run.wait(upTo: 30) { !run.process.isRunning }
    let seconds = Date().timeIntervalSince(signalled)
    #expect(ended && seconds >= 2, "ended after the grace: \(seconds) s")
    run.process.waitUntilExit()
    #expect(run.process.terminationStatus == 143)
    #expect(
      run.errors.contains(
        "darkroom: \(folder.file("in/photo-6-hangs.jpg")): abandoned: darkroom was asked to stop before this file finished\n"
      ))
    #expect(run.errors.contains("apply: 9 done, 0 skipped, 1 failed"))
    #expect(run.errors.contains("apply: stopped by SIGTERM; run it again to resume\n"))
    #expect(
      run.errors.contains(
        "darkroom: SIGTERM: starting no more files; those running get 2 s to finish\n"))
    let left = try FileManager.default.subpathsOfDirectory(atPath: folder.file("out"))
      .filter { $0.split(separator: "/").last?.hasSuffix(".tmp") ?? false }
    #expect(left.isEmpty, "no temporaries: \(left)")
    #expect(processes(marked: "DARKROOM_TEST_RUN=\(marker)").isEmpty, "no process left")

    // Run again: the nine are skipped, and only the abandoned file is tried.
    let again = try CLI.run(
      Self.arguments(folder, grace: "2") + ["--timeout", "1"],
      environment: ["DARKROOM_TEST_DECODER_FAULT": "hang=hangs"])
    #expect(again.stderr.contains("apply: 0 done, 9 skipped, 1 failed"), "\(again.stderr)")
  }

  @Test("Ctrl-C twice: abandoned at once, exit 130")
  func secondInterruptAbandonsAtOnce() throws {
    let (folder, marker) = try Self.batch()
    let run = try RunningCLI(
      Self.arguments(folder, grace: "600"),
      environment: ["DARKROOM_TEST_DECODER_FAULT": "hang=hangs", "DARKROOM_TEST_RUN": marker])
    #expect(
      run.wait(upTo: 60) {
        run.output.components(separatedBy: "\"status\":\"done\"").count - 1 == 9
      })
    run.signal(SIGINT)
    // Two signals sent at once are one to the kernel: the second waits for the first's word.
    #expect(run.wait(upTo: 30) { run.errors.contains("darkroom: SIGINT: starting no more files") })
    run.signal(SIGINT)
    let ended = run.wait(upTo: 30) { !run.process.isRunning }
    #expect(ended, "a second Ctrl-C does not wait out a 600 s grace")
    run.process.waitUntilExit()
    #expect(run.process.terminationStatus == 130)
    #expect(run.errors.contains("abandoned: darkroom was asked to stop"))
    #expect(processes(marked: "DARKROOM_TEST_RUN=\(marker)").isEmpty, "no process left")
  }
}

extension SignalTests {
  @Test("render of several files under SIGTERM: starts no more, abandons the hung one, 143")
  func renderStopsToo() throws {
    let (folder, marker) = try Self.batch()
    let files = try FileManager.default.contentsOfDirectory(atPath: folder.file("in")).sorted()
      .map { folder.file("in/" + $0) }
    let hung = try #require(files.firstIndex { $0.hasSuffix("hangs.jpg") })
    let run = try RunningCLI(
      ["render", "--rep", "thumbnail", "--no-cache", "--grace", "1", "--timeout", "120"] + files + [
        "-o", folder.file("thumbs/"),
      ],
      environment: ["DARKROOM_TEST_DECODER_FAULT": "hang=hangs", "DARKROOM_TEST_RUN": marker])
    #expect(run.wait(upTo: 60) { run.output.split(separator: "\n").count == hung })
    run.signal(SIGTERM)
    #expect(run.wait(upTo: 30) { !run.process.isRunning })
    run.process.waitUntilExit()
    #expect(run.process.terminationStatus == 143)
    #expect(run.errors.contains("darkroom: \(files[hung]): abandoned: "))
    #expect(run.errors.contains("render: stopped with \(files.count - hung - 1) not started\n"))
    #expect(processes(marked: "DARKROOM_TEST_RUN=\(marker)").isEmpty, "no process left")
  }
}

extension SignalTests {
  /// A name in `folder` whose path's hash begins as `file`'s does: under the 256 striped lock
  /// files edits once took, the two shared a lock.
  static func sharingStripe(with file: String, in folder: String) throws -> String {
    let stripe = ContentHash.of(text: file).hex.prefix(2)
    let name = try #require(
      (0..<100_000).lazy.map { "photo-\($0).jpg" }.first {
        ContentHash.of(text: folder + "/" + $0).hex.prefix(2) == stripe
      })
    return name
  }

  @Test("a file whose decoder hangs holds up no other file, not even one that shared its lock")
  func hungFileHoldsUpNoOther() throws {
    let folder = try Fixture.temporaryFolder()
    let hung = folder.file("out/a-hangs.jpg")
    let other = try Self.sharingStripe(with: hung, in: folder.file("out"))
    try FileManager.default.createDirectory(
      atPath: folder.file("in"), withIntermediateDirectories: true)
    _ = try folder.write("in/a-hangs.jpg", Fixture.bytes(Fixture.sample("orientation-6.jpg")))
    _ = try folder.write("in/" + other, Fixture.bytes(Fixture.sample("orientation-1.jpg")))
    let marker = UUID().uuidString
    let run = try RunningCLI(
      [
        "apply", "--jobs", "2", "--grace", "0", "--timeout", "120", "--filter", "noir",
        folder.file("in"), "-o", folder.file("out"), "--progress", "json",
      ],
      environment: ["DARKROOM_TEST_DECODER_FAULT": "hang=hangs", "DARKROOM_TEST_RUN": marker])
    // The hung file is first in order, so it most often takes its lock first: under the
    // striped locks, the other file then waited for it until the end.
    let otherDone = run.wait(upTo: 60) {
      run.output.contains("\"output\":\"\(folder.file("out/" + other))\"")
    }
    #expect(otherDone, "\(other) is done while a-hangs.jpg hangs: \(run.output)\(run.errors)")
    #expect(run.process.isRunning, "a-hangs.jpg still hangs")
    run.signal(SIGTERM)
    run.process.waitUntilExit()
    #expect(run.process.terminationStatus == 143)
    #expect(run.errors.contains("apply: 1 done, 0 skipped, 1 failed"), "\(run.errors)")
    #expect(processes(marked: "DARKROOM_TEST_RUN=\(marker)").isEmpty, "no process left")
  }
}
