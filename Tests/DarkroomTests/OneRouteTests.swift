import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

@testable import Darkroom
@testable import DarkroomServer

/// Every door that changes a photo (the command line's apply, edit and revert, the server's
/// edit, revert and jobs, a space) goes through the one job, and leaves the catalog true at
/// once: no rescan, no server running.
@Suite("One route through the engine", .timeLimit(.minutes(10)), .offThePool)
struct OneRouteTests {
  @Test(
    "the same change through every door leaves the catalog true, the change log exact, and no stale rendition",
    .timeLimit(.minutes(8)))
  func everyDoor() async throws {
    let served = try ServedLibrary()
    let library = served.library
    let root = served.root
    func id(_ name: String) throws -> AssetID {
      try #require(try library.asset(atPath: root + "/" + name)?.id)
    }
    let start = try library.lastChange()
    let before = try await thumbnails(served)

    // The command line: apply in place, edit, edit then revert.
    let apply = try CLI.run(["apply", "--filter", "noir", "orientation-1.jpg"], cwd: root)
    #expect(apply.status == 0, "\(apply.stderr)")
    let edit = try CLI.run(["edit", "orientation-2.jpg", "--filter", "noir"], cwd: root)
    #expect(edit.stdout == "orientation-2.jpg: edited (version 1: noir)\n", "\(edit.stderr)")
    #expect(try CLI.run(["edit", "orientation-3.jpg", "--filter", "noir"], cwd: root).status == 0)
    let revert = try CLI.run(["revert", "orientation-3.jpg"], cwd: root)
    #expect(revert.stdout == "orientation-3.jpg: restored the original\n", "\(revert.stderr)")

    // The server: an edit, a job, an edit then a revert.
    let (four, five, six) = (
      try id("orientation-4.jpg"), try id("orientation-5.jpg"), try id("orientation-6.jpg")
    )
    try await served.test { client, _ in
      for target in [four, six] {
        let edited = try await client.execute(
          uri: "/api/assets/\(target)/edit", method: .post, headers: ServedLibrary.write,
          body: jsonBody(["filters": ["noir"]]))
        #expect(edited.status == .ok, "\(edited.text)")
      }
      let reverted = try await client.execute(
        uri: "/api/assets/\(six)/revert", method: .post, headers: ServedLibrary.write,
        body: jsonBody([:]))
      #expect(reverted.status == .ok, "\(reverted.text)")
      let started = try await client.execute(
        uri: "/api/jobs", method: .post, headers: ServedLibrary.write,
        body: jsonBody(["action": "apply", "filters": ["noir"], "ids": [five.rawValue]]))
      #expect(started.status == .accepted, "\(started.text)")
      let job = try #require(started.object["id"] as? String)
      var finished = false
      while !finished {
        let status = try await client.execute(
          uri: "/api/jobs/\(job)", method: .get, headers: ServedLibrary.read)
        finished = status.object["finished"] as? Bool ?? false
        if finished { #expect(status.object["done"] as? Int == 1, "\(status.text)") }
        try await Task.sleep(for: .milliseconds(20))
      }
    }

    // Each asset's content hash is its file's SHA-256, with no scan since.
    let edited: Set = [
      "orientation-1.jpg", "orientation-2.jpg", "orientation-4.jpg", "orientation-5.jpg",
    ]
    let assets = try library.assets(matching: AssetQuery())
    let all = try assets.assets(in: 0..<assets.count)
    #expect(all.count == 9)
    for asset in all {
      #expect(
        asset.contentHash == (try ContentHash.of(file: library.path(of: asset)).hex),
        "\(asset.path)")
    }
    // list --edited names exactly the edited ones.
    let listed = try CLI.run(["list", "--edited", "-0"], cwd: root)
    #expect(listed.status == 0, "\(listed.stderr)")
    let names = Set(
      listed.stdout.split(separator: "\0").map {
        URL(fileURLWithPath: String($0)).lastPathComponent
      })
    #expect(names == edited)
    // One change-log entry per change, and nothing inserted or removed.
    let changes = try library.changes(since: start)
    #expect(changes.allSatisfy { $0.kind == .changed }, "\(changes)")
    var perPath: [String: Int] = [:]
    for change in changes { perPath[change.path, default: 0] += 1 }
    #expect(
      perPath == [
        "orientation-1.jpg": 1, "orientation-2.jpg": 1, "orientation-3.jpg": 2,
        "orientation-4.jpg": 1, "orientation-5.jpg": 1, "orientation-6.jpg": 2,
      ])

    // A server started afterwards serves what the files are now.
    let after = try await thumbnails(served)
    for asset in all {
      let name = URL(fileURLWithPath: asset.path).lastPathComponent
      let (old, new) = (try #require(before[asset.id]), try #require(after[asset.id]))
      if edited.contains(name) {
        #expect(old != new, "\(name): a stale thumbnail")
        let pixel = try centrePixel(new)
        #expect(abs(pixel[0] - pixel[1]) < 2 && abs(pixel[1] - pixel[2]) < 2, "\(name): \(pixel)")
      } else {
        #expect(old == new, "\(name)")
      }
    }
  }

  /// A folder holding space S (its password in `pa`) with gps.jpg encrypted into it, and
  /// the arguments that give a command the password, and the space.
  private func spaceWithPhoto() throws -> (TemporaryFolder, key: [String], space: [String]) {
    let folder = try Fixture.temporaryFolder()
    let cwd = folder.url.path
    _ = try folder.write("pa", Array("correct horse\n".utf8))
    try FileManager.default.copyItem(
      atPath: Fixture.sample("gps.jpg"), toPath: folder.file("gps.jpg"))
    let key = ["--password-file", "pa"]
    let kdf = ["--kdf-passes", "1", "--kdf-memory", "8"]
    #expect(try CLI.run(["space", "create", "S"] + key + kdf, cwd: cwd).status == 0)
    #expect(try CLI.run(["space", "add", "S", "gps.jpg"] + key, cwd: cwd).status == 0)
    return (folder, key, ["--space", "S"] + key)
  }

  // A time limit here is a hang guard, not a speed check, and it counts from when a test is
  // started, waiting included: synchronous tests that run commands hold Swift Testing's two
  // cooperative threads (one per core) while they wait, so a test can wait a minute before
  // it runs (the Layers suite, 0.4 s alone, passed its one-minute limit in a full run). Every
  // guard is 3 minutes or more for that reason.
  @Test(
    "the editor's filters and auto through a space give the pixels they give a folder's file, stored as the same explicit graph",
    .timeLimit(.minutes(5)))
  func editorFiltersInASpace() throws {
    let (folder, _, space) = try spaceWithPhoto()
    let cwd = folder.url.path
    let specs = ["auto", "vibrance 0.3", "definition 0.4", "vignette -0.3", "grain 0.2"]
    let filters = specs.flatMap { ["--filter", $0] }
    let edit = try CLI.run(["edit"] + space + ["gps.jpg"] + filters, cwd: cwd)
    #expect(edit.status == 0, "\(edit.stderr)")
    try FileManager.default.createDirectory(
      atPath: folder.file("plain"), withIntermediateDirectories: true)
    let plain = try folder.write("plain/gps.jpg", Fixture.bytes(Fixture.sample("gps.jpg")))
    #expect(try CLI.run(["edit", plain] + filters, cwd: cwd).status == 0)
    let opened = try Space.open(folder.file("S"), password: Array("correct horse".utf8))
    defer { opened.close() }
    let asset = try opened.asset("gps.jpg")
    let inSpace = try #require(try opened.history(asset).last?.graph)
    let outside = try #require(try Library.adjustments(ofFile: plain)?.graph)
    #expect(inSpace.nodes == outside.nodes)
    #expect(!inSpace.nodes.contains { $0.op == "auto" })
    let sealed = try folder.write("sealed.jpg", try opened.current(asset))
    #expect(try pixels(sealed).pixels() == pixels(plain).pixels())
  }

  @Test("edit, apply and revert in a space change its catalog once each", .timeLimit(.minutes(5)))
  func space() throws {
    let (folder, _, space) = try spaceWithPhoto()
    let cwd = folder.url.path
    let edit = try CLI.run(["edit"] + space + ["gps.jpg", "--filter", "noir"], cwd: cwd)
    #expect(edit.stdout == "gps.jpg: edited (version 1: noir)\n", "\(edit.stderr)")
    let apply = try CLI.run(["apply"] + space + ["--filter", "mono", "gps.jpg"], cwd: cwd)
    #expect(apply.status == 0, "\(apply.stderr)")
    var opened = try Space.open(folder.file("S"), password: Array("correct horse".utf8))
    var asset = try opened.asset("gps.jpg")
    #expect(asset.editVersion == 2)
    #expect(try opened.history(asset).map(\.graph.nodes.count) == [1, 1])
    opened.close()
    let revert = try CLI.run(["revert"] + space + ["gps.jpg"], cwd: cwd)
    #expect(revert.stdout == "gps.jpg: restored the original\n", "\(revert.stderr)")
    opened = try Space.open(folder.file("S"), password: Array("correct horse".utf8))
    asset = try opened.asset("gps.jpg")
    #expect(asset.editVersion == 0)
    #expect(try opened.current(asset) == opened.original(asset))
    opened.close()
  }

  @Test(
    "a space's assets are named as a library's: by asset id (or the 32 hex digits printed before), and every listing gives the same",
    .timeLimit(.minutes(5)))
  func spaceIDs() throws {
    let (folder, key, space) = try spaceWithPhoto()
    let cwd = folder.url.path
    let opened = try Space.open(folder.file("S"), password: Array("correct horse".utf8))
    let asset = try opened.asset("gps.jpg")
    opened.close()
    let listed = try CLI.run(["list", "--json"] + space, cwd: cwd)
    let spaceListed = try CLI.run(["space", "list", "S", "--json"] + key, cwd: cwd)
    #expect(listed.status == 0 && listed.stdout == spaceListed.stdout, "\(listed.stderr)")
    let rows = try #require(
      try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]])
    let id = try #require(rows.first?["id"] as? String)
    #expect(rows.count == 1 && AssetID(id) != nil && rows[0]["path"] as? String == "gps.jpg")
    #expect(SpaceAsset.assetID(asset.id)?.rawValue == id)
    let byID = try CLI.run(["edit"] + space + [id, "--filter", "noir"], cwd: cwd)
    #expect(byID.stdout == "gps.jpg: edited (version 1: noir)\n", "\(byID.stderr)")
    let byOldID = try CLI.run(["revert"] + space + [asset.id], cwd: cwd)
    #expect(byOldID.stdout == "gps.jpg: restored the original\n", "\(byOldID.stderr)")
    let unknown = try CLI.run(
      ["edit"] + space + ["01JD3ZQ4N8W5XK2M7P9R1T6V0B", "--filter", "noir"], cwd: cwd)
    #expect(unknown.status == 1)
    #expect(
      unknown.stderr
        == "darkroom: 01JD3ZQ4N8W5XK2M7P9R1T6V0B: no asset with this id or name in the space\n")
  }

  @Test(
    "an upload is catalogued as a scan would: 201 or a 4xx for each damaged file, never 5xx, and a refused one leaves nothing",
    .timeLimit(.minutes(8)))
  func hostileUploads() async throws {
    let served = try ServedLibrary(samples: [])
    var corpus: [(String, [UInt8])] = [("empty.jpg", []), ("text.png", Array("not a photo".utf8))]
    for sample in ["gps.jpg", "alpha.png", "heif-exif-6.heic", "display-p3.jpg", "clip.mov"] {
      let bytes = try Fixture.bytes(Fixture.sample(sample))
      let (stem, ext) = (
        String(sample.split(separator: ".")[0]), String(sample.split(separator: ".")[1])
      )
      for cut in [16, 100, bytes.count / 4, bytes.count / 2, bytes.count * 3 / 4, bytes.count - 12]
      {
        corpus.append(("\(stem)-cut\(cut).\(ext)", Array(bytes.prefix(cut))))
      }
      var scrambled = bytes
      for index in stride(from: bytes.count / 3, to: bytes.count * 2 / 3, by: 7) {
        scrambled[index] ^= 0x5A
      }
      corpus.append(("\(stem)-scrambled.\(ext)", scrambled))
    }
    let uploads = served.root + "/Uploads"
    try await served.test { [corpus] client, _ in
      for (name, bytes) in corpus {
        let response = try await client.execute(
          uri: "/api/uploads?name=\(name)", method: .post, headers: ServedLibrary.write,
          body: ByteBuffer(bytes: bytes))
        #expect(response.status.code < 500, "\(name): \(response.status) \(response.text)")
        if response.status != .created {
          #expect((400..<500).contains(response.status.code), "\(name): \(response.status)")
          #expect(!FileManager.default.fileExists(atPath: uploads + "/" + name), "\(name) stayed")
          #expect(response.errorKind != "engine", "\(name): \(response.text)")
          #expect(!response.text.contains(".upload."), "\(name): \(response.text)")
        }
      }
    }
    // What stayed is exactly what the catalog holds, each with its file's hash.
    let kept = Set((try? FileManager.default.contentsOfDirectory(atPath: uploads)) ?? [])
    let assets = try served.library.assets(matching: AssetQuery())
    let catalogued = try assets.assets(in: 0..<assets.count)
    #expect(Set(catalogued.map { URL(fileURLWithPath: $0.path).lastPathComponent }) == kept)
    for asset in catalogued {
      #expect(asset.contentHash == (try ContentHash.of(file: served.library.path(of: asset)).hex))
    }
    #expect(try await served.library.scan().added == 0)
  }

  /// Every asset's thumbnail, as a server started now serves it.
  private func thumbnails(_ served: ServedLibrary) async throws -> [AssetID: [UInt8]] {
    let ids = try served.ids()
    let found = Locked<[AssetID: [UInt8]]>([:])
    try await served.test { client, _ in
      for id in ids {
        let response = try await client.execute(
          uri: "/api/assets/\(id)/thumbnail", method: .get, headers: ServedLibrary.read)
        #expect(response.status == .ok)
        found.withLock { $0[id] = response.bytes }
      }
    }
    return found.withLock { $0 }
  }
}

extension OneRouteTests {
  @Test(
    "every command of a library takes it the same way: DIR, --library DIR, or the current folder")
  func libraryArgument() throws {
    let served = try ServedLibrary(samples: ["gps.jpg"])
    let root = served.root
    for command in [["albums"], ["list"], ["trash", "list"], ["duplicates"], ["check"], ["scan"]] {
      let positional = try CLI.run(command + [root] + (command == ["scan"] ? [] : ["--json"]))
      let option = try CLI.run(command + ["--library", root])
      let here = try CLI.run(command, cwd: root)
      #expect(positional.status == 0, "\(command): \(positional.stderr)")
      #expect(option.status == 0 && here.status == 0, "\(command): \(option.stderr) \(here.stderr)")
      if command == ["albums"] { #expect(option.stdout == here.stdout) }
    }
    let both = try CLI.run(["albums", root, "--library", "/tmp"])
    #expect(both.status == 2)
    #expect(both.stderr.contains("Give the library once: as DIR or as --library DIR"))
  }
}

extension OneRouteTests {
  @Test("the gallery compiled into the binary is Gallery/ as it is, and every template compiles")
  func galleryIsGenerated() throws {
    let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .appendingPathComponent("../../Gallery").standardizedFileURL.path
    let names = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
    #expect(names == Gallery.files.keys.sorted(), "run Scripts/generate-gallery.sh")
    for name in names {
      let text = try String(contentsOfFile: folder + "/" + name, encoding: .utf8)
      // The generator indents each line by four spaces and trims trailing blanks.
      let expected = text.split(separator: "\n", omittingEmptySubsequences: false)
        .map { $0.replacing(/\s+$/, with: "") }.joined(separator: "\n")
      let compiled = Gallery.files[name]?.split(separator: "\n", omittingEmptySubsequences: false)
        .map { $0.replacing(/\s+$/, with: "") }.joined(separator: "\n")
      #expect(compiled.map { $0 + "\n" } == expected, "\(name): run Scripts/generate-gallery.sh")
    }
    let served = try ServedLibrary(samples: [])
    _ = try Gallery(
      library: served.library, sessions: Sessions(spaceIdle: .seconds(60)), tokens: Tokens())
  }
}
