import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import Darkroom
@testable import DarkroomServer

/// User presets (issue 54): an edit saved by name in its library, usable wherever a built-in
/// preset is, through the CLI and the API alike.
@Suite("User presets", .timeLimit(.minutes(10)), .offThePool)
struct PresetTests {
  @Test(
    "CLI: filters --save keeps a file's edit; apply --filter NAME gives the same pixels; names checked; --delete"
  )
  func command() throws {
    let (folder, paths) = try workspace("gps.jpg", "orientation-1.jpg")
    defer { withExtendedLifetime(folder) {} }
    _ = try Library.create(at: folder.path)
    let edit = try CLI.run(
      ["edit", paths[0], "--filter", "tone exposure=0.3", "--filter", "vibrance 0.4"])
    #expect(edit.status == 0, "\(edit.stderr)")
    let save = try CLI.run(
      ["filters", "--save", "Bright", "--from", paths[0], "--description", "a lift"],
      cwd: folder.path)
    #expect(save.status == 0, "\(save.stderr)")
    #expect(save.stdout.hasPrefix("saved preset bright in "))
    let stored = try Fixture.bytes(folder.file(".darkroom/presets/bright.json"))
    #expect(String(decoding: stored, as: UTF8.self).contains("\"description\":\"a lift\""))
    let listing = try CLI.run(["filters"], cwd: folder.path)
    #expect(
      listing.stdout.contains(
        "This library's presets:\n  bright: a lift  [tone exposure=0.3 | vibrance amount=0.4]\n"))
    let json = try CLI.run(["filters", "--json"], cwd: folder.path)
    #expect(json.stdout.contains("\"user\" : true"))

    // Used by name: the same filters, the same pixels as the file it came from.
    let copy = try folder.write("copy.jpg", Fixture.bytes(Fixture.sample("gps.jpg")))
    let apply = try CLI.run(
      ["apply", "--filter", "bright", copy, "--progress", "none"], cwd: folder.path)
    #expect(apply.status == 0, "\(apply.stderr)")
    #expect(try pixels(copy).pixels() == pixels(paths[0]).pixels())

    // Names: a built-in's is refused, as is one that is not a name; nothing is written.
    let builtIn = try CLI.run(["filters", "--save", "noir", "--from", paths[0]], cwd: folder.path)
    #expect(builtIn.status == 1)
    #expect(builtIn.stderr == "darkroom: 'noir' is a built-in filter; choose another name\n")
    let odd = try CLI.run(["filters", "--save", "../x", "--from", paths[0]], cwd: folder.path)
    #expect(odd.status == 1)
    #expect(odd.stderr.contains("a preset's name is 1 to 40 lowercase letters, digits and -"))
    let unedited = try CLI.run(["filters", "--save", "none", "--from", paths[1]], cwd: folder.path)
    #expect(unedited.status == 1)
    #expect(unedited.stderr.hasSuffix("orientation-1.jpg: not edited: there is no edit to save\n"))
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: folder.file(".darkroom/presets"))
        == ["bright.json"])
    let usage = try CLI.run(["filters", "--save", "x"], cwd: folder.path)
    #expect(usage.status == 2)

    let delete = try CLI.run(["filters", "--delete", "bright"], cwd: folder.path)
    #expect(delete.status == 0 && delete.stdout == "deleted preset bright\n")
    let again = try CLI.run(["filters", "--delete", "bright"], cwd: folder.path)
    #expect(
      again.status == 1 && again.stderr == "darkroom: no preset 'bright' in the library here\n")
    let gone = try CLI.run(["apply", "--filter", "bright", copy], cwd: folder.path)
    #expect(gone.status == 2 && gone.stderr.contains("Unknown filter 'bright'"))
  }

  @Test(
    "API: a preset saved from an asset's edit is listed, applied by a job and an edit, and deleted")
  func api() async throws {
    let served = try ServedLibrary(samples: ["gps.jpg", "orientation-1.jpg", "orientation-3.jpg"])
    let ids = try served.ids()
    let library = served.library
    _ = try await library.edit(ids[0], with: FilterGraph.parse(specs: ["noir", "vignette -0.4"]))
    try await served.test { client, _ in
      let saved = try await client.execute(
        uri: "/api/presets", method: .post, headers: ServedLibrary.write,
        body: jsonBody(["name": "moody", "from": ids[0].rawValue, "description": "dark"]))
      #expect(saved.status == .created, "\(saved.text)")
      #expect(saved.object["filters"] as? [String] == ["noir", "vignette amount=-0.4"])
      let readOnly = try await client.execute(
        uri: "/api/presets", method: .post, headers: ServedLibrary.read,
        body: jsonBody(["name": "other", "filters": ["noir"]]))
      #expect(readOnly.status == .forbidden)
      let listed = try await client.execute(
        uri: "/api/filters", method: .get, headers: ServedLibrary.read)
      let presets = try #require(listed.object["presets"] as? [[String: Any]])
      #expect(presets.last?["name"] as? String == "moody")
      #expect(presets.last?["user"] as? Bool == true)
      let filters = try #require(listed.object["filters"] as? [[String: Any]])
      #expect(filters.map { $0["name"] as? String }.contains("hsl"))
      let sharpen = try #require(filters.first { $0["name"] as? String == "sharpen" })
      let radius = try #require(
        (sharpen["parameters"] as? [[String: Any]])?.first { $0["name"] as? String == "radius" })
      #expect(radius["min"] as? Double == 0.3 && radius["max"] as? Double == 5)
      #expect(radius["pixels"] as? Bool == true)

      let job = try await client.execute(
        uri: "/api/jobs", method: .post, headers: ServedLibrary.write,
        body: jsonBody(["action": "apply", "filters": ["moody"], "ids": [ids[1].rawValue]]))
      #expect(job.status == .accepted, "\(job.text)")
      let jobID = try #require(job.object["id"] as? String)
      let events = try await client.execute(
        uri: "/api/jobs/\(jobID)/events", method: .get, headers: ServedLibrary.read)
      #expect(events.text.contains("event: done"))
      let edit = try await client.execute(
        uri: "/api/assets/\(ids[2].rawValue)/edit", method: .post, headers: ServedLibrary.write,
        body: jsonBody(["filters": ["moody"]]))
      #expect(edit.status == .ok, "\(edit.text)")

      let bad = try await client.execute(
        uri: "/api/presets", method: .post, headers: ServedLibrary.write,
        body: jsonBody(["name": "sepia", "filters": ["noir"]]))
      #expect(bad.status == .badRequest)
      let unknown = try await client.execute(
        uri: "/api/presets", method: .post, headers: ServedLibrary.write,
        body: jsonBody(["name": "x", "from": "01ARZ3NDEKTSV4RRFFQ69G5FAV"]))
      #expect(unknown.status == .notFound)
      let deleted = try await client.execute(
        uri: "/api/presets/moody", method: .delete, headers: ServedLibrary.write)
      #expect(deleted.status == .noContent)
      let twice = try await client.execute(
        uri: "/api/presets/moody", method: .delete, headers: ServedLibrary.write)
      #expect(twice.status == .notFound)
      #expect(twice.errorKind != nil)
    }
    for id in ids[1...2] {
      let graph = try #require(try library.editHistory(id).versions.last?.graph)
      #expect(graph.nodes.map(\.text) == ["noir", "vignette amount=-0.4"])
    }
  }

  @Test(
    "API: Auto's choices for an asset, explicit and changing nothing; an edit with auto stores them explicit"
  )
  func auto() async throws {
    // A cast the test makes: the sample's gps.jpg under a warm light, within what Auto corrects
    // (about 0.03 uv along the daylight locus; the stronger 1.25, 1, 0.7 it was is past it).
    let folder = try TemporaryFolder()
    let image = try VipsImage.open(path: Fixture.sample("gps.jpg"), sequential: false)
    let warm = try image.recombined([1, 0, 0, 0, 0.92, 0, 0, 0, 0.8]).encode(suffix: ".jpg[Q=92]")
    let path = try folder.write("warm.jpg", warm)
    let library = try Library.create(at: folder.path)
    _ = try await library.scan()
    let served = ServedLibrary(over: library, in: folder)
    let id = try served.ids()[0]
    try await served.test { client, _ in
      let chosen = try await client.execute(
        uri: "/api/assets/\(id.rawValue)/auto", method: .post, headers: ServedLibrary.read)
      #expect(chosen.status == .ok, "\(chosen.text)")
      let filters = try #require(chosen.object["filters"] as? [String])
      #expect(filters.first?.hasPrefix("balance temperature=") == true, "\(filters)")
      // Each one reads back as a filter; the file is as it was.
      #expect(throws: Never.self) { try FilterGraph.parse(specs: filters, readingFiles: false) }
      #expect(try Fixture.bytes(path) == warm)
      let after = try await client.execute(
        uri: "/api/assets/\(id.rawValue)/auto", method: .post, headers: ServedLibrary.read,
        body: jsonBody(["filters": ["tone exposure=9"]]))
      #expect(after.status == .badRequest)
      let edit = try await client.execute(
        uri: "/api/assets/\(id.rawValue)/edit", method: .post, headers: ServedLibrary.write,
        body: jsonBody(["filters": ["auto"]]))
      #expect(edit.status == .ok, "\(edit.text)")
    }
    let stored = try #require(try library.editHistory(id).versions.last?.graph)
    #expect(stored.nodes.first?.op == "balance")
    #expect(!stored.nodes.contains { $0.op == "auto" })
  }
}
