import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

@testable import Darkroom
@testable import DarkroomServer

/// `Library.add`, PhotoKit's creation request, through every door: the Swift API, `darkroom
/// import`, the API's upload, and a space.
@Suite("Adding files to a library", .timeLimit(.minutes(10)), .offThePool)
struct LibraryAddTests {
  /// A card of files to add: a photo, a text file named .jpg, a JPEG cut short.
  private static func card(in folder: TemporaryFolder) throws -> [String: String] {
    let photo = try Fixture.bytes(Fixture.sample("gps.jpg"))
    let cut = Array(try Fixture.bytes(Fixture.sample("display-p3.jpg")).prefix(3000))
    return [
      "photo": try folder.write("gps.jpg", photo),
      "text": try folder.write("notes.jpg", Array("not an image".utf8)),
      "cut": try folder.write("cut.jpg", cut),
    ]
  }

  /// What a file is: its bytes, mode, links and modification time.
  private static func state(_ path: String) throws -> [String] {
    var info = stat()
    guard stat(path, &info) == 0 else { return ["gone"] }
    return [
      String(try Fixture.bytes(path).hashValue), String(info.st_mode), String(info.st_nlink),
      String(info.st_mtim.tv_sec), String(info.st_mtim.tv_nsec),
    ]
  }

  /// What a door answered for one file: added, the same bytes again, or an error's words.
  enum Answer: Equatable {
    case added(String)
    case duplicate(String)
    case refused(String)
  }

  /// The library's files besides `.darkroom/` (temporaries included).
  private static func files(_ library: Library) throws -> [String] {
    let enumerator = FileManager.default.enumerator(atPath: library.rootPath)
    var found: [String] = []
    while let path = enumerator?.nextObject() as? String {
      if path.hasPrefix(".darkroom") { continue }
      var isFolder: ObjCBool = false
      let exists = FileManager.default.fileExists(
        atPath: library.rootPath + "/" + path, isDirectory: &isFolder)
      if exists && !isFolder.boolValue { found.append(path) }
    }
    return found.sorted()
  }

  @Test(
    "every door adds the same way: a photo copied byte for byte and catalogued, the same bytes again named as their asset, a text file and a cut JPEG refused by name leaving nothing, the card untouched"
  )
  func everyDoor() async throws {
    let cardFolder = try TemporaryFolder()
    let card = try Self.card(in: cardFolder)
    let before = try card.mapValues(Self.state)
    let order = ["photo", "photo", "text", "cut"]
    var answers: [String: [Answer]] = [:]

    // The Swift API.
    let swift = try ServedLibrary(samples: ["orientation-1.jpg"])
    for key in order {
      do {
        let (asset, added) = try swift.library.add(file: card[key] ?? "")
        answers["swift", default: []].append(added ? .added(asset.path) : .duplicate(asset.path))
      } catch {
        answers["swift", default: []].append(.refused(error.message))
      }
    }
    #expect(
      throws: DarkroomError(
        .invalidArgument, file: swift.folder.file("orientation-1.jpg"),
        "is in the library already: scan it to catalogue it")
    ) { try swift.library.add(file: swift.folder.file("orientation-1.jpg")) }

    // The command line, one file at a time (exit 1 and one line for each refused).
    let cli = try ServedLibrary(samples: ["orientation-1.jpg"])
    for key in order {
      let path = card[key] ?? ""
      let run = try CLI.run(["import", "--library", cli.root, "--json", path])
      if run.status == 0 {
        let object = try JSONSerialization.jsonObject(with: run.stdoutData) as? [String: Any]
        let (status, where_) = (object?["status"] as? String, object?["path"] as? String ?? "")
        answers["cli", default: []].append(
          status == "added" ? .added(where_) : .duplicate(where_))
      } else {
        #expect(run.status == 1)
        let prefix = "darkroom: \(path): "
        #expect(run.stderr.hasPrefix(prefix), "\(run.stderr)")
        answers["cli", default: []].append(
          .refused(String(run.stderr.dropFirst(prefix.count).dropLast())))
      }
    }

    // The API's upload.
    let server = try ServedLibrary(samples: ["orientation-1.jpg"])
    let uploads = try order.map { key in
      (URL(fileURLWithPath: card[key] ?? "").lastPathComponent, try Fixture.bytes(card[key] ?? ""))
    }
    let apiAnswers = Locked<[Answer]>([])
    try await server.test { client, _ in
      for (name, bytes) in uploads {
        let response = try await client.execute(
          uri: "/api/uploads?name=\(name)", method: .post, headers: ServedLibrary.write,
          body: ByteBuffer(bytes: bytes))
        let asset = response.object["asset"] as? [String: Any]
        let path = asset?["path"] as? String ?? ""
        switch response.object["status"] as? String {
        case "added":
          #expect(response.status == .created)
          apiAnswers.withLock { $0.append(.added(path)) }
        case "duplicate":
          #expect(response.status == .ok)
          apiAnswers.withLock { $0.append(.duplicate(path)) }
        default:
          #expect(response.status == .unprocessableContent, "\(name)")
          let error = response.object["error"] as? [String: Any]
          let message = error?["message"] as? String ?? ""
          apiAnswers.withLock { $0.append(.refused(String(message.dropFirst(name.count + 2)))) }
        }
      }
    }
    answers["api"] = apiAnswers.withLock { $0 }

    let expected: [Answer] = [
      .added("Uploads/gps.jpg"), .duplicate("Uploads/gps.jpg"),
      .refused(
        "is not a photo or video Darkroom reads (not an image in any format Darkroom reads)"),
      .refused("is damaged: truncated JPEG: image data ends without an end-of-image marker"),
    ]
    for door in ["swift", "cli", "api"] {
      #expect(answers[door] == expected, "\(door)")
    }
    for library in [swift.library, cli.library, server.library] {
      // One copy, byte for byte, catalogued; nothing else left (no temporary).
      #expect(try Self.files(library) == ["Uploads/gps.jpg", "orientation-1.jpg"])
      #expect(
        try Fixture.bytes(library.rootPath + "/Uploads/gps.jpg")
          == Fixture.bytes(Fixture.sample("gps.jpg")))
      #expect(try library.assetIDs(matching: AssetQuery()).count == 2)
    }
    #expect(try card.mapValues(Self.state) == before)
  }

  @Test(
    "--move removes the file once its copy is durable (a duplicate's too), into a folder asked for; a library's own file reached through a link is refused and kept"
  )
  func moveAndLinks() throws {
    let served = try ServedLibrary(samples: ["orientation-1.jpg"])
    let library = served.library
    let card = try TemporaryFolder()
    let turned = try Fixture.bytes(Fixture.sample("orientation-6.jpg"))
    let source = try card.write("IMG_6.jpg", turned)
    let (asset, added) = try library.add(file: source, move: true, into: "Trips/2026")
    #expect(added && asset.path == "Trips/2026/IMG_6.jpg")
    #expect(!FileManager.default.fileExists(atPath: source))
    #expect(try Fixture.bytes(library.rootPath + "/Trips/2026/IMG_6.jpg") == turned)

    // The same bytes again, moved: named as the asset that has them, and removed.
    let again = try card.write("again.jpg", turned)
    let duplicate = try library.add(file: again, move: true)
    #expect(!duplicate.added && duplicate.asset.id == asset.id)
    #expect(!FileManager.default.fileExists(atPath: again))

    // The same bytes moved while the asset that has them is in the trash (which may be
    // emptied): refused, and the file kept where it was.
    try library.trash([asset.id])
    let third = try card.write("third.jpg", turned)
    #expect(
      throws: DarkroomError(
        .conflict, file: third,
        "the library has these bytes as IMG_6.jpg (\(asset.id)), which is in the trash or not "
          + "as catalogued: restore or scan it; kept here")
    ) { try library.add(file: third, move: true) }
    #expect(try Fixture.bytes(third) == turned)

    // A link from outside to the library's own file: refused, and the file is kept.
    let own = library.rootPath + "/orientation-1.jpg"
    let original = try Fixture.bytes(own)
    try FileManager.default.createSymbolicLink(
      atPath: card.file("link.jpg"), withDestinationPath: own)
    #expect(
      throws: DarkroomError(
        .invalidArgument, file: card.file("link.jpg"),
        "is in the library already: scan it to catalogue it")
    ) { try library.add(file: card.file("link.jpg"), move: true) }
    #expect(try Fixture.bytes(own) == original)

    // A hard link from outside to the library's own file, moved: the same bytes, but the
    // library's copy is that very file; nothing is removed.
    #expect(link(own, card.file("hard.jpg")) == 0)
    #expect(throws: DarkroomError.self) { try library.add(file: card.file("hard.jpg"), move: true) }
    #expect(try Fixture.bytes(own) == original)
    #expect(try Fixture.bytes(card.file("hard.jpg")) == original)

    // A folder outside the library, and a name that climbs: kept inside.
    #expect(throws: DarkroomError.self) {
      try library.add(file: Fixture.sample("gps.jpg"), into: "../out")
    }
    let named = try library.add(
      bytes: try Fixture.bytes(Fixture.sample("gps.jpg")), name: "../../evil.jpg")
    #expect(named.added && named.asset.path == "Uploads/evil.jpg")
    withExtendedLifetime(served) {}
  }

  @Test("a library never scanned takes a file: its catalog is made, and lists it")
  func unscanned() throws {
    let folder = try TemporaryFolder()
    let library = try Library.create(at: folder.path)
    let (asset, added) = try library.add(file: Fixture.sample("gps.jpg"))
    #expect(added && asset.path == "Uploads/gps.jpg")
    #expect(library.hasCatalog)
    #expect(try library.assetIDs(matching: AssetQuery()) == [asset.id])
  }

  @Test("a space takes the same calls, and refuses a folder by name")
  func space() throws {
    let folder = try TemporaryFolder()
    let library = try Library.create(space: folder.file("S"), password: Array("pw".utf8))
    defer { library.close() }
    let (asset, added) = try library.add(file: Fixture.sample("gps.jpg"))
    #expect(added && asset.name == "gps.jpg")
    #expect(
      try library.add(bytes: Fixture.bytes(Fixture.sample("gps.jpg")), name: "b.jpg").added == false
    )
    #expect(
      throws: DarkroomError(
        .invalidArgument, file: library.rootPath,
        "is an encrypted space: it has no folders to put files in")
    ) { try library.add(file: Fixture.sample("orientation-1.jpg"), into: "Trips") }
    // The same bytes moved while the asset that has them is in the space's trash: kept.
    try library.trash([asset.id])
    let copy = try folder.write("copy.jpg", try Fixture.bytes(Fixture.sample("gps.jpg")))
    #expect(
      throws: DarkroomError(
        .conflict, file: copy,
        "the space has these bytes as gps.jpg, which is in the trash: restore it; kept here")
    ) { try library.add(file: copy, move: true) }
    #expect(try Fixture.bytes(copy) == Fixture.bytes(Fixture.sample("gps.jpg")))
  }
}
