import Foundation
import Testing

@testable import Darkroom

/// Argon2id at its cheapest, so that tests open spaces in milliseconds.
let testKDF = KDFParameters(ops: 1, memory: 8 << 20)

func pw(_ text: String) -> [UInt8] { Array(text.utf8) }

/// Every regular file under `folder`, with its bytes.
/// The objects of a folder of spaces (paths under `objects/`) whose header opens under `keys`.
func objects(in folder: String, openingWith keys: SpaceKeys) throws -> [String] {
  try filesUnder(folder + "/objects").keys.filter { path in
    (try? SpaceObjectReader(
      path: folder + "/objects/" + path, name: String(path.split(separator: "/").last ?? ""),
      keys: keys, label: "x")) != nil
  }.sorted()
}

func filesUnder(_ folder: String) throws -> [String: [UInt8]] {
  var out: [String: [UInt8]] = [:]
  let enumerator = FileManager.default.enumerator(atPath: folder)
  while let relative = enumerator?.nextObject() as? String {
    var isFolder: ObjCBool = false
    let path = folder + "/" + relative
    if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), !isFolder.boolValue {
      out[relative] = try Fixture.bytes(path)
    }
  }
  return out
}

/// Signatures no byte under a space's folder may contain: image headers, EXIF and XMP
/// markers, and the texts given (file names).
func plaintextFound(under folder: String, names: [String]) throws -> [String] {
  // A JPEG's start with the segment that always follows (nil: any byte, an APP1's length):
  // 7 fixed bytes or more, so that ciphertext (random bytes) holds one with odds of about
  // its length over 2^56. Four bytes alone (FF D8 FF and a marker) turned up in about one
  // run in 500 of the add that is killed: a sealed file reported as a leak.
  var signatures: [(String, [UInt8?])] = [
    ("JPEG/JFIF", [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10, 0x4A, 0x46, 0x49, 0x46]),
    ("JPEG/EXIF", [0xFF, 0xD8, 0xFF, 0xE1, nil, nil, 0x45, 0x78, 0x69, 0x66, 0x00, 0x00]),
    ("JPEG/DQT", [0xFF, 0xD8, 0xFF, 0xDB, 0x00, 0x43, 0x00]),
    ("PNG", [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]), ("HEIF", bytes("ftypheic")),
    ("EXIF", bytes("Exif\0\0")), ("JFIF", bytes("JFIF\0")),
    ("XMP", bytes("adobe:ns:meta")), ("adjustment data", bytes("AdjustmentData")),
    ("filter", bytes("\"noir\"")),
  ]
  signatures += names.map { ($0, bytes($0)) }
  var found: [String] = []
  for (file, contents) in try filesUnder(folder) {
    for (label, signature) in signatures where contains(contents, signature) {
      found.append("\(label) in \(file)")
    }
  }
  return found
}

private func bytes(_ text: String) -> [UInt8?] { text.utf8.map { Optional($0) } }

func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
  contains(haystack, needle.map { Optional($0) } as [UInt8?])
}

/// Whether `haystack` holds `needle`, a nil in it matching any byte.
func contains(_ haystack: [UInt8], _ needle: [UInt8?]) -> Bool {
  guard needle.count <= haystack.count, let first = needle.first ?? nil else { return false }
  var i = 0
  while i <= haystack.count - needle.count {
    if haystack[i] == first
      && zip(haystack[i..<i + needle.count], needle).allSatisfy({ $1 == nil || $0 == $1 })
    {
      return true
    }
    i += 1
  }
  return false
}

@Suite("Encrypted spaces", .timeLimit(.minutes(10)), .offThePool)
struct SpaceTests {
  @Test(
    "the search for plaintext finds each kind of file a space holds: originals, a stripped rendition"
  )
  func plaintextSearchFinds() throws {
    let folder = try Fixture.temporaryFolder()
    let names = ["display-p3.jpg", "gps.jpg", "orientation-1.jpg", "alpha.png", "heif-exif-6.heic"]
    for name in names {
      try FileManager.default.copyItem(
        atPath: Fixture.sample(name), toPath: folder.file("x-" + name))
    }
    var spec = RenditionSpec(.thumbnail)
    spec.metadata = .strip
    let thumbnail = try Renderer().render(.file(Fixture.sample("gps.jpg")), spec)
    try Data(thumbnail.bytes).write(to: URL(fileURLWithPath: folder.file("x-thumbnail")))
    let found = try plaintextFound(under: folder.path, names: [])
    for name in names.map({ "x-" + $0 }) + ["x-thumbnail"] {
      #expect(found.contains { $0.hasSuffix(" in " + name) }, "\(name): \(found)")
    }
    #expect(found.contains("JPEG/JFIF in x-thumbnail") || found.contains("JPEG/DQT in x-thumbnail"))
  }

  @Test("two passwords, two spaces: each sees only its own; a third opens nothing")
  func twoSpaces() throws {
    let folder = try Fixture.temporaryFolder()
    let dir = folder.file("S")
    let a = try Space.create(at: dir, password: pw("alpha"), kdf: testKDF)
    let b = try Space.create(at: dir, password: pw("beta"), otherPasswords: [pw("alpha")])
    _ = try a.add(file: Fixture.sample("gps.jpg"))
    _ = try a.add(file: Fixture.sample("orientation-6.jpg"))
    _ = try b.add(file: Fixture.sample("display-p3.jpg"))

    let reopenedA = try Space.open(dir, password: pw("alpha"))
    let reopenedB = try Space.open(dir, password: pw("beta"))
    #expect(reopenedA.assets.map(\.name).sorted() == ["gps.jpg", "orientation-6.jpg"])
    #expect(reopenedB.assets.map(\.name) == ["display-p3.jpg"])
    #expect(
      try reopenedA.original(reopenedA.asset("gps.jpg"))
        == Fixture.bytes(Fixture.sample("gps.jpg")))

    let error = #expect(throws: DarkroomError.self) {
      try Space.open(dir, password: pw("gamma"))
    }
    #expect(
      error == DarkroomError(.invalidArgument, file: dir, "no space opens with this password"))
    // The same password cannot make a second space, nor can a password become another's.
    #expect(throws: DarkroomError.self) {
      try Space.create(at: dir, password: pw("beta"), otherPasswords: [pw("alpha")])
    }
    #expect(throws: DarkroomError.self) { try reopenedA.changePassword(to: pw("beta")) }
  }

  @Test("a folder with one space and one with eight: headers of one size that look alike")
  func headersAlike() throws {
    let folder = try Fixture.temporaryFolder()
    let one = folder.file("one")
    let eight = folder.file("eight")
    _ = try Space.create(at: one, password: pw("p0"), kdf: testKDF)
    _ = try Space.create(at: eight, password: pw("p0"), kdf: testKDF)
    for n in 1..<8 {
      _ = try Space.create(
        at: eight, password: pw("p\(n)"), otherPasswords: (0..<n).map { pw("p\($0)") })
    }
    #expect(try Space.open(eight, password: pw("p7")).assets.isEmpty)
    #expect(throws: DarkroomError.self) {
      try Space.create(
        at: eight, password: pw("p8"), otherPasswords: (0..<8).map { pw("p\($0)") })
    }
    let h1 = try Fixture.bytes(one + "/header")
    let h8 = try Fixture.bytes(eight + "/header")
    #expect(h1.count == 736 && h8.count == 736)
    #expect(Array(h1[0..<16]) == Array(h8[0..<16]), "the same magic, version and slot count")
    for header in [h1, h8] {
      let parsed = try SpaceHeader.parse(header, folder: "h")
      #expect(parsed.slots.allSatisfy { $0.kdf == testKDF }, "every slot shows the same parameters")
      // Each slot's nonce and sealed key are 72 bytes that look random: no run of four equal
      // bytes (a placeholder of zeros or a constant would show).
      for slot in parsed.slots {
        let bytes = slot.nonce + slot.sealed
        #expect(bytes.count == 72)
        #expect(!(0..<bytes.count - 3).contains { i in Set(bytes[i..<i + 4]).count == 1 })
      }
    }
  }

  @Test("add, edit, render: no plaintext anywhere under the folder; outputs are right")
  func noPlaintext() throws {
    let folder = try Fixture.temporaryFolder()
    let dir = folder.file("S")
    let space = try Space.create(at: dir, password: pw("alpha"), kdf: testKDF)
    let (photo, added) = try space.add(file: Fixture.sample("gps.jpg"))
    #expect(added)
    #expect(try space.add(file: Fixture.sample("gps.jpg")).added == false, "the same bytes twice")
    let (turned, _) = try space.add(file: Fixture.sample("orientation-6.jpg"))
    let edited = try space.edit(turned, graph: graph("noir"))
    let thumb = try space.render(edited, RenditionSpec(.thumbnail))
    let screen = try space.render(photo, RenditionSpec(.fullscreen))
    let again = try space.render(photo, RenditionSpec(.fullscreen))
    #expect(again.fromCache && again.bytes == screen.bytes)
    #expect(try edited.editVersion == 1 && space.history(edited).map(\.version) == [1])

    let grey = try decode(thumb)
    let p = try grey.pixel(x: 128, y: 128)
    #expect(p[0] == p[1] && p[1] == p[2], "the edit's thumbnail is grey: \(p)")
    #expect((screen.width, screen.height) == (600, 400))

    #expect(try plaintextFound(under: dir, names: ["gps.jpg", "orientation-6"]).isEmpty)
    // Object sizes are padded, not the originals' sizes.
    let sizes = try filesUnder(dir + "/objects").values.map(\.count)
    let original = try Fixture.bytes(Fixture.sample("gps.jpg")).count
    #expect(sizes.contains(SpaceObject.storedSize(original)))
    #expect(SpaceObject.padded(original) > original || SpaceObject.padded(original) == original)
  }

  @Test("a space's photos are decoded by its own workers only, which end when it closes")
  func ownWorkers() throws {
    let folder = try Fixture.temporaryFolder()
    let space = try Space.create(at: folder.file("S"), password: pw("alpha"), kdf: testKDF)
    let (photo, _) = try space.add(file: Fixture.sample("gps.jpg"))
    let shared = WorkerPool(.init(executable: CLI.binary))
    defer { shared.shutDown() }
    var renderer = PixelSettings()
    renderer.workers = shared
    let thumb = try space.render(photo, RenditionSpec(.thumbnail), settings: renderer)
    _ = try space.edit(photo, graph: graph("noir"), settings: renderer)
    #expect(
      thumb.bytes
        == (try space.render(photo, RenditionSpec(.thumbnail), cached: false)
          .bytes))
    // The library's pool never saw the space's bytes; the space's own pool did, both jobs.
    #expect(shared.counts.started == 0)
    let own = try #require(space.ownWorkers)
    #expect(own.counts.started == 1 && own.counts.running == 1)
    space.close()
    #expect(space.ownWorkers == nil)
    #expect(own.counts.running == 0)
  }

  @Test(
    "a space's preview and Auto decode in its own workers, never in the ones the library was given"
  )
  func previewInOwnWorkers() throws {
    let folder = try Fixture.temporaryFolder()
    let space = try Space.create(at: folder.file("S"), password: pw("alpha"), kdf: testKDF)
    let library = Library(space: space)
    let (photo, _) = try library.add(file: Fixture.sample("gps.jpg"))
    let shared = WorkerPool(.init(executable: CLI.binary))
    defer { shared.shutDown() }
    var settings = PixelSettings()
    settings.workers = shared
    var spec = RenditionSpec(.fullscreen)
    (spec.screenWidth, spec.screenHeight) = (320, 320)
    let preview = try library.preview(
      photo.id, graph: try FilterGraph.parse(spec: "noir"), spec, settings: settings)
    let grey = try centrePixel(preview.bytes)
    #expect(grey[0] == grey[1] && grey[1] == grey[2], "grey: \(grey)")
    _ = try library.autoFilters(
      photo.id, after: try FilterGraph.parse(spec: "tone exposure=-1"), settings: settings)
    #expect(shared.counts.started == 0)
    let own = try #require(space.ownWorkers)
    #expect(own.counts.started == 1)
    space.close()
  }

  @Test("an idle space locks itself: at its deadline, not while in use, at its end however used")
  func idleLock() async throws {
    let folder = try Fixture.temporaryFolder()
    let space = try Space.create(at: folder.file("S"), password: pw("alpha"), kdf: testKDF)
    // The check its timer makes at each deadline, asked here at chosen instants.
    let start = ContinuousClock.now
    space.lockWhenIdle(after: .seconds(600), atLatest: start + .seconds(3600))
    #expect(!space.lockIfIdle(at: start + .seconds(599)))
    space.touch(at: start + .seconds(500))
    #expect(!space.lockIfIdle(at: start + .seconds(1000)))
    #expect(space.idleDeadline(at: start + .seconds(1000)) == start + .seconds(1100))
    // Work under way with its keys holds it: its deadline moves on with the time.
    try space.using { () throws(DarkroomError) in
      #expect(!space.lockIfIdle(at: start + .seconds(2000)))
      #expect(space.idleDeadline(at: start + .seconds(3300)) == start + .seconds(3600))
    }
    // Used until just before its end, it locks at the end all the same.
    space.touch(at: start + .seconds(3500))
    #expect(!space.lockIfIdle(at: start + .seconds(3599)))
    #expect(!space.isClosed)
    #expect(space.lockIfIdle(at: start + .seconds(3600)))
    #expect(space.isClosed && space.keys.space.isWiped && space.keys.names.isWiped)
    #expect(space.idleDeadline(at: .now) == nil)
    #expect(space.idleTimer.withLock { $0 } == nil)

    // The timer itself: unused, the space locks with nobody asking, even while every thread
    // of the cooperative pool is held by blocking work (as a busy process may hold them): it
    // does not wait for one. The wait allows a minute, so no speed of the machine is assumed.
    let timed = try Space.open(folder.file("S"), password: pw("alpha"))
    let release = DispatchSemaphore(value: 0)
    let holders = ProcessInfo.processInfo.activeProcessorCount
    for _ in 0..<holders { Task.detached { release.wait() } }
    timed.lockWhenIdle(after: .milliseconds(50))
    let waiting = ContinuousClock.now
    while !timed.isClosed, .now - waiting < .seconds(60) { usleep(10_000) }
    for _ in 0..<holders { release.signal() }
    #expect(timed.isClosed && timed.keys.space.isWiped)
  }

  @Test("Padmé padding: never smaller, at most 12% larger, few distinct sizes")
  func padding() {
    for length in [0, 1, 2, 100, 4_096, 65_537, 1_000_000, 123_456_789] {
      let padded = SpaceObject.padded(length)
      #expect(padded >= length && Double(padded) <= Double(length) * 1.12 + 1)
    }
    let sizes = Set((1_000_000..<1_100_000).map(SpaceObject.padded))
    #expect(sizes.count < 30, "100,000 lengths share \(sizes.count) padded sizes")
  }

  @Test("a range read opens only the chunks it covers")
  func rangeRead() throws {
    let folder = try Fixture.temporaryFolder()
    let keys = SpaceKeys(Sodium.randomKey())
    let content = (0..<1_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) }
    let path = folder.file("object")
    try SpaceObject.write(content, name: "n1", to: path, keys: keys)
    #expect(SpaceObject.chunkCount(padded: SpaceObject.padded(content.count)) == 16)

    let one = try SpaceObjectReader(path: path, name: "n1", keys: keys, label: "a")
    #expect(try one.read(200_000..<200_100) == Array(content[200_000..<200_100]))
    #expect(one.chunksOpened == 1)
    let two = try SpaceObjectReader(path: path, name: "n1", keys: keys, label: "a")
    #expect(try two.read(65_530..<65_540) == Array(content[65_530..<65_540]))
    #expect(two.chunksOpened == 2)
    let all = try SpaceObjectReader(path: path, name: "n1", keys: keys, label: "a")
    #expect(try all.readAll() == content)
    #expect(all.chunksOpened == 16)
  }

  @Test("tampering: a changed byte, swapped chunks, a truncated or swapped object all fail")
  func tampering() throws {
    let folder = try Fixture.temporaryFolder()
    let keys = SpaceKeys(Sodium.randomKey())
    let content = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
    let path = folder.file("object")
    try SpaceObject.write(content, name: "n1", to: path, keys: keys)
    let good = try Fixture.bytes(path)
    func reading(_ bytes: [UInt8], as name: String = "n1") throws -> DarkroomError? {
      try Data(bytes).write(to: URL(fileURLWithPath: path))
      return #expect(throws: DarkroomError.self) {
        try SpaceObjectReader(path: path, name: name, keys: keys, label: "photo.jpg").readAll()
      }
    }
    let sealedChunk = SpaceObject.chunkBytes + Sodium.tagBytes
    let chunk1 = SpaceObject.headerBytes + sealedChunk

    var flipped = good
    flipped[chunk1 + 100] ^= 1
    let changed = try reading(flipped)
    #expect(changed?.kind == .corrupt && changed?.file == "photo.jpg")
    #expect(changed?.message.contains("chunk 1") == true)

    var swapped = good
    swapped.replaceSubrange(
      SpaceObject.headerBytes..<chunk1 + sealedChunk,
      with: good[chunk1..<chunk1 + sealedChunk] + good[SpaceObject.headerBytes..<chunk1])
    #expect(try reading(swapped)?.message.contains("chunk 0") == true)

    let truncated = try reading(Array(good.prefix(chunk1)))
    #expect(truncated?.kind == .truncated)

    // Another object's bytes under this name: its header is bound to its own name.
    #expect(try reading(good, as: "n2")?.kind == .corrupt)
    // And the object restored opens again.
    try Data(good).write(to: URL(fileURLWithPath: path))
    #expect(
      try SpaceObjectReader(path: path, name: "n1", keys: keys, label: "x").readAll() == content)
  }

  @Test("a tampered original fails naming its asset; the space's other assets still open")
  func tamperedAsset() throws {
    let folder = try Fixture.temporaryFolder()
    let dir = folder.file("S")
    let space = try Space.create(at: dir, password: pw("alpha"), kdf: testKDF)
    let (a, _) = try space.add(file: Fixture.sample("gps.jpg"))
    let (b, _) = try space.add(file: Fixture.sample("orientation-6.jpg"))
    let path = space.objectPath(a.original)
    var bytes = try Fixture.bytes(path)
    bytes[SpaceObject.headerBytes + 10] ^= 0x40
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    let error = #expect(throws: DarkroomError.self) {
      try space.render(a, RenditionSpec(.thumbnail))
    }
    #expect(error?.file == "gps.jpg" && error?.kind == .corrupt)
    #expect(try space.original(b) == Fixture.bytes(Fixture.sample("orientation-6.jpg")))

    // b's object put in a's place: a's reader refuses it.
    try FileManager.default.removeItem(atPath: path)
    try FileManager.default.copyItem(atPath: space.objectPath(b.original), toPath: path)
    #expect(throws: DarkroomError.self) { try space.original(a) }
  }

  @Test("a new password re-seals one slot: the old one fails, nothing else changes")
  func changePassword() throws {
    let folder = try Fixture.temporaryFolder()
    let dir = folder.file("S")
    let space = try Space.create(at: dir, password: pw("old"), kdf: testKDF)
    let other = try Space.create(at: dir, password: pw("other"), otherPasswords: [pw("old")])
    _ = try space.add(file: Fixture.sample("gps.jpg"))
    _ = try other.add(file: Fixture.sample("display-p3.jpg"))
    let objects = try filesUnder(dir + "/objects")
    let before = try SpaceHeader.read(dir)

    try space.changePassword(to: pw("new"))
    #expect(throws: DarkroomError.self) { try Space.open(dir, password: pw("old")) }
    #expect(try Space.open(dir, password: pw("new")).assets.map(\.name) == ["gps.jpg"])
    #expect(try Space.open(dir, password: pw("other")).assets.map(\.name) == ["display-p3.jpg"])
    #expect(try filesUnder(dir + "/objects") == objects, "no object was re-encrypted")
    let after = try SpaceHeader.read(dir)
    #expect(zip(before.slots, after.slots).filter { $0 != $1 }.count == 1, "one slot changed")
  }

  @Test("a rotated key: same assets and bytes, new objects; an old header copy opens nothing")
  func rotateKey() throws {
    let folder = try Fixture.temporaryFolder()
    let dir = folder.file("S")
    let space = try Space.create(at: dir, password: pw("old"), kdf: testKDF)
    let other = try Space.create(at: dir, password: pw("other"), otherPasswords: [pw("old")])
    let (a, _) = try space.add(file: Fixture.sample("gps.jpg"))
    let (b, _) = try space.add(file: Fixture.sample("orientation-6.jpg"))
    let edited = try space.edit(b, graph: graph("noir"))
    _ = try space.render(a, RenditionSpec(.thumbnail))
    _ = try other.add(file: Fixture.sample("display-p3.jpg"))
    let editedBytes = try space.current(edited)
    let history = try space.history(edited)
    let oldHeader = try Fixture.bytes(dir + "/header")
    let otherObjects = try objects(in: dir, openingWith: other.keys)
    let before = Set(try filesUnder(dir + "/objects").keys)

    let rotated = try space.rotateKey(password: pw("new"))
    #expect(space.isClosed)
    #expect(rotated.assets.map(\.id) == [a.id, b.id], "ids never change")
    #expect(try rotated.original(rotated.asset(a.id)) == Fixture.bytes(Fixture.sample("gps.jpg")))
    #expect(try rotated.current(rotated.asset(b.id)) == editedBytes)
    #expect(try rotated.history(rotated.asset(b.id)).map(\.graph) == history.map(\.graph))
    // Every object of this space is new; the other space's are exactly as they were.
    let after = Set(try filesUnder(dir + "/objects").keys)
    #expect(before.intersection(after) == Set(otherObjects))
    #expect(try Space.open(dir, password: pw("other")).assets.count == 1)
    #expect(throws: DarkroomError.self) { try Space.open(dir, password: pw("old")) }

    // An old copy of the header, with the old password: the old key, and nothing it opens.
    rotated.close()
    _ = try folder.write("S/header", oldHeader)
    let stale = try Space.open(dir, password: pw("old"))
    #expect(stale.assets.isEmpty)
    #expect(try objects(in: dir, openingWith: stale.keys).isEmpty, "none opens with the old key")
  }

  @Test("a rotation killed before or after its switch: the next writer undoes or finishes it")
  func rotationCutOff() throws {
    for point in ["rotation-before-switch", "rotation-after-switch"] {
      let folder = try Fixture.temporaryFolder()
      let dir = folder.file("S")
      let space = try Space.create(at: dir, password: pw("old"), kdf: testKDF)
      let (a, _) = try space.add(file: Fixture.sample("gps.jpg"))
      space.close()
      let oldHeader = try Fixture.bytes(dir + "/header")
      let old = try folder.write("old", Array("old\n".utf8))
      let new = try folder.write("new", Array("new\n".utf8))
      let killed = try CLI.run(
        ["space", "passwd", dir, "--rotate", "--password-file", old, "--new-password-file", new],
        environment: ["DARKROOM_FAULT": point])
      #expect(killed.status == 137, "\(point): \(killed.stderr)")
      let password = point == "rotation-before-switch" ? "old" : "new"
      // The next writer (an add) recovers; the photo is whole either way.
      let reopened = try Space.open(dir, password: pw(password))
      _ = try reopened.add(file: Fixture.sample("orientation-1.jpg"))
      #expect(
        try reopened.original(reopened.asset(a.id)) == Fixture.bytes(Fixture.sample("gps.jpg")))
      // Every object left opens under the key in force; none is a leftover of the other.
      let all = try filesUnder(dir + "/objects").keys
      let mine = try objects(in: dir, openingWith: reopened.keys)
      #expect(mine.count == all.count && all.count == 2, "\(point): \(all)")
      if point == "rotation-after-switch" {
        _ = try folder.write("S/header", oldHeader)
        #expect(try Space.open(dir, password: pw("old")).assets.isEmpty)
      }
    }
  }

  @Test("a removed space: its password opens nothing, its objects are gone, others stay")
  func removeSpace() throws {
    let folder = try Fixture.temporaryFolder()
    let dir = folder.file("S")
    let space = try Space.create(at: dir, password: pw("gone"), kdf: testKDF)
    let other = try Space.create(at: dir, password: pw("other"), otherPasswords: [pw("gone")])
    _ = try space.add(file: Fixture.sample("gps.jpg"))
    _ = try other.add(file: Fixture.sample("display-p3.jpg"))
    let headerSize = try Fixture.bytes(dir + "/header").count
    try space.remove()
    #expect(space.isClosed)
    #expect(throws: DarkroomError.self) { try Space.open(dir, password: pw("gone")) }
    #expect(try Space.open(dir, password: pw("other")).assets.map(\.name) == ["display-p3.jpg"])
    #expect(try filesUnder(dir + "/objects").count == 1, "only the other space's object")
    #expect(try Fixture.bytes(dir + "/header").count == headerSize, "the header looks the same")
  }

  @Test("trash, restore and revert; revert removes the edit's objects")
  func trashAndRevert() throws {
    let folder = try Fixture.temporaryFolder()
    let dir = folder.file("S")
    let space = try Space.create(at: dir, password: pw("alpha"), kdf: testKDF)
    let (a, _) = try space.add(file: Fixture.sample("gps.jpg"))
    let count = try filesUnder(dir + "/objects").count
    let edited = try space.edit(a, graph: graph("noir"))
    let twice = try space.edit(edited, graph: graph("noir", "flip"))
    #expect(try twice.editVersion == 2 && space.history(twice).count == 2)
    #expect(try filesUnder(dir + "/objects").count == count + 2, "the first edit's objects went")
    let reverted = try space.revert(twice).after
    #expect(reverted.editVersion == 0)
    #expect(try space.current(reverted) == Fixture.bytes(Fixture.sample("gps.jpg")))
    #expect(try filesUnder(dir + "/objects").count == count)

    try space.setTrashed([a], true)
    #expect(try Space.open(dir, password: pw("alpha")).assets.filter(\.trashed).map(\.id) == [a.id])
    try space.setTrashed([a], false)
    #expect(try Space.open(dir, password: pw("alpha")).assets.contains { $0.trashed } == false)
  }
}

@Suite("Encrypted spaces on the command line", .timeLimit(.minutes(10)), .offThePool)
struct SpaceCommandTests {
  /// A folder with a space (password "alpha" in the file `pa`) and copies of samples.
  func setUp() throws -> (TemporaryFolder, String) {
    let folder = try Fixture.temporaryFolder()
    _ = try folder.write("pa", pw("alpha\n"))
    _ = try folder.write("pb", pw("beta\n"))
    for name in ["gps.jpg", "orientation-6.jpg"] {
      _ = try folder.write(name, Fixture.bytes(Fixture.sample(name)))
    }
    let created = try CLI.run(
      ["space", "create", "S", "--password-file", "pa", "--kdf-passes", "1", "--kdf-memory", "8"],
      cwd: folder.url.path)
    #expect(created.status == 0, "\(created.stderr)")
    return (folder, folder.file("S"))
  }

  @Test("a wrong password: one line that says nothing else, exit 1")
  func wrongPassword() throws {
    let (folder, _) = try setUp()
    let result = try CLI.run(["space", "list", "S", "--password-file", "pb"], cwd: folder.url.path)
    #expect(result.status == 1)
    #expect(result.stderr == "darkroom: S: no space opens with this password\n")
    #expect(result.stdout.isEmpty)
  }

  @Test(
    "add --move removes the file only once it is in the space; export gives its bytes, into a folder it makes (not over a file in the way)"
  )
  func addMoveExport() throws {
    let (folder, dir) = try setUp()
    let original = try Fixture.bytes(folder.file("gps.jpg"))
    let added = try CLI.run(
      ["space", "add", "S", "gps.jpg", "--move", "--password-file", "pa"], cwd: folder.url.path)
    #expect(added.status == 0, "\(added.stderr)")
    #expect(added.stdout.hasPrefix("gps.jpg: added as "))
    #expect(!FileManager.default.fileExists(atPath: folder.file("gps.jpg")))
    #expect(try plaintextFound(under: dir, names: ["gps.jpg"]).isEmpty)

    _ = try folder.write("in-the-way", [1, 2, 3])
    let blocked = try CLI.run(
      ["space", "export", "S", "-o", "in-the-way", "--password-file", "pa"], cwd: folder.url.path)
    #expect(blocked.status == 1)
    #expect(
      blocked.stderr == "darkroom: in-the-way: cannot create a folder: a file is in the way\n")
    #expect(try Fixture.bytes(folder.file("in-the-way")) == [1, 2, 3])
    // A folder not there yet is made, as render -o DIR/ makes one.
    let exported = try CLI.run(
      ["space", "export", "S", "-o", "out", "--password-file", "pa"], cwd: folder.url.path)
    #expect(exported.status == 0, "\(exported.stderr)")
    #expect(try Fixture.bytes(folder.file("out/gps.jpg")) == original)
    // A second export never overwrites: it takes the next free name.
    _ = try CLI.run(
      ["space", "export", "S", "-o", "out", "--password-file", "pa"], cwd: folder.url.path)
    #expect(try Fixture.bytes(folder.file("out/gps-2.jpg")) == original)
  }

  @Test("kill -9 while an object is half written, then after it is durable: recovery")
  func killDuringAdd() throws {
    for point in ["space-object-partial", "space-object-durable"] {
      let (folder, dir) = try setUp()
      // A JPEG with 3 MiB after its end: several batches of chunks, so a kill lands mid-object.
      let big =
        try Fixture.bytes(Fixture.sample("gps.jpg")) + [UInt8](repeating: 7, count: 3 << 20)
      _ = try folder.write("big.jpg", big)
      let killed = try CLI.run(
        ["space", "add", "S", "big.jpg", "--move", "--password-file", "pa"], cwd: folder.url.path,
        environment: ["DARKROOM_FAULT": point])
      #expect(killed.status == 128 + 9, "\(point): \(killed.stderr)")
      #expect(try Fixture.bytes(folder.file("big.jpg")) == big, "\(point): the source is kept")
      #expect(!(try filesUnder(dir + "/objects").isEmpty), "\(point): the kill left an object")
      #expect(try plaintextFound(under: dir, names: ["big.jpg"]).isEmpty)
      // The next write recovers: the half object, or the whole one no row names, goes.
      let next = try CLI.run(
        ["space", "add", "S", "orientation-6.jpg", "--password-file", "pa"], cwd: folder.url.path)
      #expect(next.status == 0, "\(next.stderr)")
      let space = try Space.open(dir, password: pw("alpha"))
      #expect(space.assets.map(\.name) == ["orientation-6.jpg"], "\(point)")
      #expect(
        try filesUnder(dir + "/objects").keys.map { String($0.suffix(32)) }
          == space.assets.map(\.original), "\(point)")
    }
  }

  @Test("kill -9 during an edit leaves the asset as it was, with no stray objects")
  func killDuringEdit() throws {
    let (folder, dir) = try setUp()
    _ = try CLI.run(
      ["space", "add", "S", "gps.jpg", "--password-file", "pa"], cwd: folder.url.path)
    let before = try filesUnder(dir + "/objects")
    let killed = try CLI.run(
      ["edit", "--space", "S", "--password-file", "pa", "--filter", "noir", "gps.jpg"],
      cwd: folder.url.path, environment: ["DARKROOM_FAULT": "space-edit-written"])
    #expect(killed.status == 128 + 9)
    #expect(try filesUnder(dir + "/objects").count == before.count + 2)
    let reverted = try CLI.run(
      ["revert", "--space", "S", "--password-file", "pa", "gps.jpg"], cwd: folder.url.path)
    #expect(reverted.stdout == "gps.jpg: not edited; nothing to revert\n")
    #expect(try filesUnder(dir + "/objects") == before)
    #expect(try plaintextFound(under: dir, names: ["gps.jpg"]).isEmpty)
  }

  @Test("list, render, edit, apply, trash with --space; passwd")
  func commands() throws {
    let (folder, dir) = try setUp()
    let cwd = folder.url.path
    let add = try CLI.run(
      ["space", "add", "S", "gps.jpg", "orientation-6.jpg", "--password-file", "pa"], cwd: cwd)
    #expect(add.status == 0)
    let list = try CLI.run(["list", "--space", "S", "--password-file", "pa"], cwd: cwd)
    #expect(list.stdout.contains("  600x400  original  gps.jpg\n"))
    let edit = try CLI.run(
      ["apply", "--space", "S", "--password-file", "pa", "--filter", "noir", "gps.jpg"], cwd: cwd)
    // apply in a space is apply: a summary on standard error, the file's line with --progress.
    #expect(edit.status == 0 && edit.stdout.isEmpty)
    #expect(edit.stderr.hasPrefix("apply: 1 done, 0 skipped, 0 failed in "), "\(edit.stderr)")
    let again = try CLI.run(
      ["edit", "--space", "S", "--password-file", "pa", "--filter", "mono", "gps.jpg"], cwd: cwd)
    #expect(
      again.stdout == "gps.jpg: edited (version 2: noir | tone saturation=-1)\n", "\(again.stderr)")
    let render = try CLI.run(
      [
        "render", "--space", "S", "--password-file", "pa", "gps.jpg", "--rep", "thumbnail",
        "-o", "t.png",
      ], cwd: cwd)
    #expect(render.status == 0, "\(render.stderr)")
    let p = try pixels(folder.file("t.png")).pixel(x: 100, y: 100)
    #expect(p[0] == p[1] && p[1] == p[2])
    let noOutput = try CLI.run(
      ["render", "--space", "S", "--password-file", "pa", "gps.jpg"], cwd: cwd)
    #expect(noOutput.status == 2)
    let trash = try CLI.run(
      ["trash", "--space", "S", "--password-file", "pa", "orientation-6.jpg"], cwd: cwd)
    #expect(trash.stdout.hasPrefix("orientation-6.jpg: in the trash ("))
    let trashed = try CLI.run(
      ["space", "list", "S", "--trashed", "--password-file", "pa"], cwd: cwd)
    #expect(trashed.stdout.hasSuffix("  original  orientation-6.jpg\n"))
    _ = try folder.write("new", pw("gamma\n"))
    let passwd = try CLI.run(
      ["space", "passwd", "S", "--password-file", "pa", "--new-password-file", "new"], cwd: cwd)
    #expect(passwd.status == 0)
    #expect(try CLI.run(["space", "list", "S", "--password-file", "pa"], cwd: cwd).status == 1)
    #expect(try CLI.run(["space", "list", "S", "--password-file", "new"], cwd: cwd).status == 0)
    #expect(try plaintextFound(under: dir, names: ["gps.jpg", "orientation-6"]).isEmpty)
  }
}

extension Space {
  /// The library's render of one of this space's assets as the row `asset` has it
  /// (``Library/renderSealed``): these tests hold the space's own rows.
  func render(
    _ asset: SpaceAsset, _ spec: RenditionSpec, settings: PixelSettings = PixelSettings(),
    cached: Bool = true
  ) throws(DarkroomError) -> Rendition {
    try using { () throws(DarkroomError) in
      try Library.renderSealed(
        asset, in: self, spec, settings: settings, cached: cached, fromOriginal: false)
    }
  }

  /// The library's edit of one of this space's assets (``Library/makeSealedEdit``).
  func edit(
    _ asset: SpaceAsset, graph: FilterGraph, append: Bool = false,
    settings: PixelSettings = PixelSettings()
  ) throws(DarkroomError) -> SpaceAsset {
    try Library(space: self).makeSealedEdit(
      asset, in: self, graph: graph, append: append, settings: settings)
  }
}
