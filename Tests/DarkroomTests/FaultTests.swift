import Foundation
import Testing

@testable import Darkroom

/// A process of the CLI started without waiting, to kill or to race.
func launch(_ arguments: [String]) throws -> Process {
  let process = Process()
  process.executableURL = CLI.binary.asURL
  process.arguments = arguments
  process.standardOutput = FileHandle.nullDevice
  process.standardError = FileHandle.nullDevice
  try process.run()
  return process
}

@Suite("Faults and concurrent use", .serialized, .timeLimit(.minutes(10)), .offThePool)
struct FaultTests {
  /// Every file is either its original or a complete edit whose original is in the store.
  func expectIntact(
    _ files: [String: ContentHash], sourceLocation: SourceLocation = #_sourceLocation
  ) throws {
    for (path, original) in files {
      let now = try ContentHash.of(file: path)
      if now == original { continue }
      let data = try Editor().adjustments(path)
      #expect(
        data?.original.sha256 == original.hex, "\(path): neither original nor a known edit",
        sourceLocation: sourceLocation)
      let library = try #require(Library.containing(path), sourceLocation: sourceLocation)
      let stored = library.metadataFolder.appendingPathComponent("originals/\(original.hex)").path
      #expect(try ContentHash.of(file: stored) == original, sourceLocation: sourceLocation)
    }
  }

  @Test(
    "60 SIGKILLs at random moments of apply and edit: nothing lost, revert restores all",
    .timeLimit(.minutes(5)))
  func killLoop() throws {
    let folder = try Fixture.temporaryFolder()
    var files: [String: ContentHash] = [:]
    for n in 1...8 {
      let path = try folder.write(
        "p\(n).jpg", Fixture.bytes(Fixture.sample("orientation-\(n).jpg")))
      files[path] = try ContentHash.of(file: path)
    }
    let paths = files.keys.sorted()
    // Each round is killed at a random moment; whether the kill lands mid-write or after the
    // command finished, what must hold holds (no count of landed kills: that is the
    // machine's speed).
    for round in 0..<60 {
      let arguments =
        round % 3 == 0
        ? ["edit", paths[round % paths.count], "--filter", "tone exposure=0.\(round % 9)"]
        : [
          "apply", "--filter", round % 2 == 0 ? "noir" : "fade", "--jobs", "2", "--force",
          folder.path,
        ]
      let process = try launch(arguments)
      usleep(UInt32.random(in: 2_000...60_000))
      kill(process.processIdentifier, SIGKILL)
      process.waitUntilExit()
      try expectIntact(files)
    }
    let revert = try CLI.run(["revert", folder.path])
    #expect(revert.status == 0, "\(revert.stderr)")
    for (path, original) in files { #expect(try ContentHash.of(file: path) == original, "\(path)") }
    let temporaries = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter {
      $0.hasSuffix(".tmp")
    }
    #expect(temporaries.isEmpty, "\(temporaries)")
  }

  @Test("two apply processes on the same files at once: each file done once, nothing lost")
  func concurrentApply() throws {
    let folder = try Fixture.temporaryFolder()
    var files: [String: ContentHash] = [:]
    for n in 1...8 {
      let path = try folder.write(
        "p\(n).jpg", Fixture.bytes(Fixture.sample("orientation-\(n).jpg")))
      files[path] = try ContentHash.of(file: path)
    }
    let outputs = try (0..<2).map { i in
      let process = Process()
      process.executableURL = CLI.binary.asURL
      process.arguments = ["apply", "--filter", "chrome", "--progress", "json", folder.path]
      let pipe = folder.file("out-\(i).jsonl")
      _ = FileManager.default.createFile(atPath: pipe, contents: nil)
      process.standardOutput = try FileHandle(forWritingTo: pipe.asURL)
      process.standardError = FileHandle.nullDevice
      try process.run()
      return (process, pipe)
    }
    var statuses: [String: [String]] = [:]
    for (process, pipe) in outputs {
      process.waitUntilExit()
      #expect(process.terminationStatus == 0)
      for line in try jsonLines(String(decoding: Data(contentsOf: pipe.asURL), as: UTF8.self)) {
        statuses[line["file"] as? String ?? "", default: []].append(line["status"] as? String ?? "")
      }
    }
    for path in files.keys {
      #expect(statuses[path]?.sorted() == ["done", "skipped"], "\(path): \(statuses[path] ?? [])")
      #expect(try Editor().history(path).count == 1, "edited once")
    }
    try expectIntact(files)
    _ = try CLI.run(["revert", folder.path])
    for (path, original) in files { #expect(try ContentHash.of(file: path) == original) }
  }

  @Test("render while edit runs: every render gets a complete image, before or after")
  func renderDuringEdit() throws {
    let folder = try Fixture.temporaryFolder()
    let path = try folder.write("p.jpg", Fixture.bytes(Fixture.sample("orientation-6.jpg")))
    for round in 0..<6 {
      let edit = try launch([
        "edit", path, "--filter", round % 2 == 0 ? "crop aspect=1:1" : "rotate 90", "--replace",
      ])
      for attempt in 0..<3 {
        let out = folder.file("r-\(round)-\(attempt).png")
        let result = try CLI.run([
          "render", path, "--rep", "fullscreen", "-o", out, "--cache-dir", folder.file("cache"),
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let m = try AssetMetadata.read(path: out)
        #expect(
          [600, 400].contains(m.width) && [400, 600].contains(m.height), "\(m.width)x\(m.height)")
      }
      edit.waitUntilExit()
      #expect(edit.terminationStatus == 0)
    }
  }
}

@Suite("A render by id while an edit is put in place", .offThePool)
struct RenderDuringSwapTests {
  @Test(
    "a render by id between an edit's rename and its catalog update waits for the catalog: the edit's pixels, not a refusal"
  )
  func renderWaitsForCatalog() async throws {
    let folder = try Fixture.temporaryFolder()
    let path = try folder.write("p.jpg", Fixture.bytes(Fixture.sample("orientation-6.jpg")))
    let library = try Library.create(at: folder.path)
    _ = try await library.scan()
    let id = try #require(try library.asset(atPath: path)?.id)
    // The edit's result: the photo turned a quarter (600x400 upright becomes 400x600).
    let turned = try Editor().preview(.file(path), graph: try FilterGraph.parse(spec: "rotate 90"))
    let rendered = Locked<Result<Rendition, DarkroomError>?>(nil)
    let waitsBefore = FileLease.writerWaits.withLock { $0 }
    try FileLease.keepingLeases { () throws(DarkroomError) in
      // What an edit does: the result renamed over the photo; the catalog does not know it.
      try AtomicFile.write(turned, to: path)
      let reader = Thread {
        let result = Result { () throws(DarkroomError) in
          try library.render(id, RenditionSpec(.fullscreen))
        }
        rendered.withLock { $0 = result }
      }
      reader.start()
      // The reader has found the file leased and waits (however long it takes to get there).
      #expect(eventually(60) { FileLease.writerWaits.withLock { $0 } > waitsBefore })
      #expect(rendered.withLock { $0 } == nil)
      library.recatalogAfterChange(path)
    }
    #expect(eventually(60) { rendered.withLock { $0 } != nil })
    let rendition = try #require(try rendered.withLock { $0 }?.get())
    let metadata = try AssetMetadata.read(.data(rendition.bytes, name: "r.jpg"))
    #expect(metadata.width < metadata.height, "\(metadata.width)x\(metadata.height)")
  }
}
