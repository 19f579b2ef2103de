import Foundation
import Hummingbird
import Testing

@testable import Darkroom

/// XMP, embedded and in sidecars, read as other tools write it (exiftool here): the priority
/// `NAME.EXT.xmp`, `NAME.xmp`, embedded XMP, EXIF, field by field; hostile packets are a
/// warning each, and the photo is still described and catalogued.
@Suite("Metadata: sidecars, captions, ratings, keywords", .timeLimit(.minutes(5)), .offThePool)
struct SidecarTests {
  /// Runs exiftool, which must succeed.
  private func exiftool(_ arguments: [String], in folder: TemporaryFolder) throws {
    let run = try CLI.run(
      ["-q", "-overwrite_original"] + arguments, cwd: folder.path, executable: "/usr/bin/exiftool")
    #expect(run.status == 0, "exiftool \(arguments): \(run.stderr)")
  }

  /// gps.jpg (EXIF DateTimeOriginal 2023-12-31 23:59:58.25 at -03:00, no XMP) as `name` in a
  /// new folder.
  private func photo(_ name: String = "a.jpg") throws -> (TemporaryFolder, String) {
    let folder = try TemporaryFolder()
    try FileManager.default.copyItem(atPath: Fixture.sample("gps.jpg"), toPath: folder.file(name))
    return (folder, folder.file(name))
  }

  @Test(
    "a sidecar in UTF-16 (either byte order) or with xmp:CreateDate alone gives its date, in info, the catalog and the API, above the embedded EXIF"
  )
  func utf16AndCreateDate() async throws {
    func packet(_ date: String, as property: String) -> String {
      """
      <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">\
      <rdf:Description xmlns:exif="http://ns.adobe.com/exif/1.0/" xmlns:xmp="http://ns.adobe.com/xap/1.0/" \
      \(property)="\(date)" xmp:Rating="4"/></rdf:RDF></x:xmpmeta>
      """
    }
    let utf16LE: (String) -> [UInt8] = { text in
      [0xFF, 0xFE] + text.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
    }
    let utf16BE: (String) -> [UInt8] = { text in
      [0xFE, 0xFF] + text.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
    }
    let cases: [(String, [UInt8], String)] = [
      (
        "UTF-16 LE", utf16LE(packet("2011-05-06T07:08:09-04:00", as: "exif:DateTimeOriginal")),
        "2011-05-06T07:08:09-04:00"
      ),
      (
        "UTF-16 BE", utf16BE(packet("2012-05-06T07:08:09+02:00", as: "exif:DateTimeOriginal")),
        "2012-05-06T07:08:09+02:00"
      ),
      (
        "UTF-8 with a mark",
        [0xEF, 0xBB, 0xBF]
          + Array(packet("2013-01-02T03:04:05+00:00", as: "exif:DateTimeOriginal").utf8),
        "2013-01-02T03:04:05+00:00"
      ),
      (
        "xmp:CreateDate", Array(packet("2014-07-08T09:10:11+01:00", as: "xmp:CreateDate").utf8),
        "2014-07-08T09:10:11+01:00"
      ),
    ]
    for (what, bytes, date) in cases {
      let (folder, path) = try photo()
      _ = try folder.write("a.jpg.xmp", bytes)
      let metadata = try AssetMetadata.read(path: path)
      #expect(metadata.warnings == [], "\(what)")
      #expect(metadata.captureDate?.iso8601 == date, "\(what)")
      #expect(metadata.sources["captureDate"] == "a.jpg.xmp", "\(what)")
      #expect(metadata.rating == 4, "\(what)")
      let info = try CLI.run(["info", path])
      #expect(
        info.stdout.contains("Captured      \(date) (a.jpg.xmp)\n"), "\(what): \(info.stdout)")
      // The catalog, and the API that reads it.
      let library = try Library.create(at: folder.path)
      _ = try await library.scan()
      let asset = try #require(try library.asset(atPath: path))
      let instant = try #require(ISO8601DateFormatter().date(from: date)).timeIntervalSince1970
      let offset = metadata.captureDate?.utcOffsetMinutes
      #expect(asset.captureDate == instant && asset.captureOffsetMinutes == offset, "\(what)")
      let served = ServedLibrary(over: library, in: folder)
      try await served.test { client, _ in
        let answer = try await client.execute(
          uri: "/api/assets/\(asset.id.rawValue)", method: .get, headers: ServedLibrary.read)
        #expect(answer.object["captureDate"] as? Double == instant, "\(what): \(answer.text)")
        #expect(answer.object["captureOffsetMinutes"] as? Int == offset, "\(what)")
      }
    }
    // A meta write to a UTF-16 sidecar keeps what it said, written back as UTF-8.
    let (folder, path) = try photo()
    let sidecar = try folder.write(
      "a.jpg.xmp", utf16LE(packet("2011-05-06T07:08:09-04:00", as: "exif:DateTimeOriginal")))
    let meta = try CLI.run(["meta", path, "--rating", "2"])
    #expect(meta.status == 0, "\(meta.stderr)")
    let written = try Fixture.bytes(sidecar)
    #expect(!written.starts(with: [0xFF, 0xFE]))
    let after = try AssetMetadata.read(path: path)
    #expect(after.rating == 2 && after.captureDate?.iso8601 == "2011-05-06T07:08:09-04:00")
  }

  @Test("an XMP packet: attributes and elements, Alt, Bag, any prefix, references")
  func packet() throws {
    let text = """
      <?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?>
      <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
      <rdf:Description rdf:about="" xmlns:stars="http://ns.adobe.com/xap/1.0/" stars:Rating="3">
      <d:description xmlns:d="http://purl.org/dc/elements/1.1/"><rdf:Alt>
      <rdf:li xml:lang="fr">Le pic</rdf:li><rdf:li xml:lang="x-default">The peak &amp; &#x263A; &lt;3</rdf:li>
      </rdf:Alt></d:description>
      <dc:subject xmlns:dc="http://purl.org/dc/elements/1.1/"><rdf:Bag><rdf:li>a</rdf:li><rdf:li><![CDATA[b<c]]></rdf:li></rdf:Bag></dc:subject>
      <!-- a comment --></rdf:Description></rdf:RDF></x:xmpmeta>
      <?xpacket end="w"?>
      """
    let packet = try XMPPacket(Array(text.utf8))
    #expect(packet.text(XMPPacket.xmp, "Rating") == "3")
    #expect(packet.list(XMPPacket.dc, "description") == ["The peak & ☺ <3", "Le pic"])
    #expect(packet.list(XMPPacket.dc, "subject") == ["a", "b<c"])
    for (bad, why) in [
      ("<!DOCTYPE x [<!ENTITY a \"aaaa\">]><x>&a;</x>", "it has a DTD or entity declarations"),
      ("<x>&lol;</x>", "an entity it does not define (&lol;)"),
      ("<x><y></x>", "an end tag that closes no element"),
      ("<x>", "it ends inside an element"),
      (
        String(repeating: "<a>", count: 65) + String(repeating: "</a>", count: 65),
        "nested too deep"
      ),
    ] {
      #expect(throws: XMPPacket.Refusal(description: why), "\(bad.prefix(30))") {
        try XMPPacket(Array(bad.utf8))
      }
    }
    #expect(throws: XMPPacket.Refusal(description: "larger than 1 MiB")) {
      try XMPPacket([UInt8](repeating: 0x20, count: XMPPacket.maxBytes + 1))
    }
  }

  @Test("10,000 damaged packets: each is read or refused, never a crash or a hang")
  func damagedPackets() throws {
    let packet = Array(
      """
      <?xpacket begin=""?><x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
      <rdf:Description rdf:about="" xmlns:xmp="http://ns.adobe.com/xap/1.0/" xmp:Rating="3"
       xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:subject><rdf:Bag><rdf:li>a &amp; b</rdf:li>
      </rdf:Bag></dc:subject><![CDATA[x]]><!-- c --></rdf:Description></rdf:RDF></x:xmpmeta>
      """.utf8)
    // A fixed generator: the same packets every run.
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    func next() -> Int {
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return Int(truncatingIfNeeded: state >> 33)
    }
    let alphabet = Array("<>/!?&;=\"':-[]x#".utf8)
    var read = 0
    for _ in 0..<10_000 {
      var bytes = packet
      for _ in 0...(next() % 4) {
        let at = next() % bytes.count
        switch next() % 4 {
        case 0: bytes[at] = alphabet[next() % alphabet.count]
        case 1: bytes.remove(at: at)
        case 2: bytes.insert(alphabet[next() % alphabet.count], at: at)
        default: bytes = Array(bytes[..<at])
        }
        if bytes.isEmpty { bytes = [0x3C] }
      }
      if (try? XMPPacket(bytes)) != nil { read += 1 }
    }
    // Some damage leaves a readable packet, most does not; all of it ends.
    #expect(read > 100 && read < 9_900, "\(read) of 10,000 read")
  }

  @Test("NAME.EXT.xmp beats NAME.xmp beats the file, field by field, and info says which")
  func priority() throws {
    let (folder, path) = try photo()
    // The file alone: its EXIF date, nothing else.
    var metadata = try AssetMetadata.read(path: path)
    #expect(metadata.captureDate?.iso8601 == "2023-12-31T23:59:58.250-03:00")
    #expect(
      metadata.sources == ["captureDate": "EXIF", "timeZone": "GPS"] && metadata.caption == nil)
    // Embedded XMP (as exiftool writes it into the file): its caption, rating and keywords.
    try exiftool(
      ["-XMP-dc:Description=Embedded", "-XMP-xmp:Rating=1", "-XMP-dc:Subject=inside", "a.jpg"],
      in: folder)
    metadata = try AssetMetadata.read(path: path)
    #expect(
      metadata.caption == "Embedded" && metadata.rating == 1 && metadata.keywords == ["inside"])
    #expect(metadata.sources["caption"] == "XMP" && metadata.sources["captureDate"] == "EXIF")
    // NAME.xmp (Lightroom's): a date and a caption over the file's.
    try exiftool(
      [
        "-XMP-photoshop:DateCreated=2018:01:02 03:04:05-05:00", "-XMP-dc:Description=Lightroom",
        "-XMP-xmp:Rating=2", "a.xmp",
      ], in: folder)
    // NAME.EXT.xmp (darktable's): a rating and keywords over both.
    try exiftool(
      ["-XMP-xmp:Rating=4", "-XMP-lr:HierarchicalSubject=Places|USA|Colorado", "a.jpg.xmp"],
      in: folder)
    metadata = try AssetMetadata.read(path: path)
    #expect(metadata.captureDate?.iso8601 == "2018-01-02T03:04:05-05:00")
    #expect(metadata.caption == "Lightroom" && metadata.rating == 4)
    #expect(metadata.keywords == ["Colorado"])
    #expect(
      metadata.sources == [
        "captureDate": "a.xmp", "caption": "a.xmp", "rating": "a.jpg.xmp", "keywords": "a.jpg.xmp",
        "timeZone": "GPS",
      ])
    #expect(metadata.warnings.isEmpty)
    let info = try CLI.run(["info", path])
    #expect(info.stdout.contains("Captured      2018-01-02T03:04:05-05:00 (a.xmp)\n"))
    #expect(info.stdout.contains("Rating        4 of 5 (a.jpg.xmp)\n"))
    #expect(info.stdout.contains("Keywords      Colorado (a.jpg.xmp)\n"))
  }

  @Test("EXIF ImageDescription is a caption; a camera's placeholder is not")
  func exifCaption() throws {
    let (folder, path) = try photo()
    try exiftool(["-EXIF:ImageDescription=Sugarloaf from the beach", "a.jpg"], in: folder)
    #expect(try AssetMetadata.read(path: path).caption == "Sugarloaf from the beach")
    try exiftool(["-EXIF:ImageDescription=OLYMPUS DIGITAL CAMERA         ", "a.jpg"], in: folder)
    #expect(try AssetMetadata.read(path: path).caption == nil)
  }

  @Test("hostile sidecars: a warning each, the rest read, the photo still catalogued")
  func hostile() throws {
    let (folder, path) = try photo()
    let cases: [(String, [UInt8], String)] = [
      (
        "broken XML", Array("<x:xmpmeta><rdf:RDF>".utf8),
        "a.jpg.xmp: not read (it ends inside an element)"
      ),
      (
        "entity expansion",
        Array(
          "<!DOCTYPE lolz [<!ENTITY lol \"lol\"><!ENTITY lol2 \"&lol;&lol;\">]><x>&lol2;</x>".utf8),
        "a.jpg.xmp: not read (it has a DTD or entity declarations)"
      ),
      (
        "5 MB", [UInt8](repeating: 0x20, count: 5 << 20),
        "a.jpg.xmp: not read (larger than 1 MiB)"
      ),
      (
        // Each element carries the namespaces in scope: thousands of declarations nested
        // cost memory quadratic in the packet (4 MB of them took info to 551 MB).
        "namespace declarations",
        Array(
          (0..<64).map { level in
            "<e\(level) "
              + (0..<16).map { "xmlns:n\(level)x\($0)=\"urn:\(level):\($0)\"" }
              .joined(separator: " ") + ">"
          }.joined().utf8),
        "a.jpg.xmp: not read (more than 512 namespace declarations)"
      ),
    ]
    for (what, bytes, warning) in cases {
      _ = try folder.write("a.jpg.xmp", bytes)
      let metadata = try AssetMetadata.read(path: path)
      #expect(metadata.warnings == [warning], "\(what)")
      #expect(
        metadata.captureDate?.iso8601 == "2023-12-31T23:59:58.250-03:00",
        "\(what): the EXIF date stays")
    }
    // A sidecar that is a link to a private file elsewhere is not read through it, nor one
    // that is a hard link to a file elsewhere; the link itself is left as it is.
    let outside = try Fixture.temporaryFolder()
    let secret = try outside.write(
      "secret.xmp",
      Array(
        "<x:xmpmeta xmlns:x='adobe:ns:meta/'><rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'><rdf:Description xmlns:dc='http://purl.org/dc/elements/1.1/' dc:description='the secret'/></rdf:RDF></x:xmpmeta>"
          .utf8))
    #expect(chmod(secret, 0o600) == 0)
    let sidecar = folder.file("a.jpg.xmp")
    try FileManager.default.removeItem(atPath: sidecar)
    #expect(symlink(secret, sidecar) == 0)
    var linked = try AssetMetadata.read(path: path)
    #expect(linked.caption == nil)
    #expect(
      linked.warnings == ["a.jpg.xmp: not read (a link: sidecars are read as plain files only)"])
    let info = try CLI.run(["info", "--json", path])
    #expect(!info.stdout.contains("the secret") && !info.stderr.contains("the secret"))
    #expect(unlink(sidecar) == 0 && link(secret, sidecar) == 0)
    linked = try AssetMetadata.read(path: path)
    #expect(linked.caption == nil)
    #expect(
      linked.warnings == [
        "a.jpg.xmp: not read (it has 2 hard links: sidecars are read as files of their own only)"
      ])
    #expect(unlink(secret) == 0)
    #expect(try AssetMetadata.read(path: path).caption == "the secret", "a file of its own again")
    #expect(unlink(sidecar) == 0)

    // Values that make no sense are ignored one by one; the others are taken.
    try exiftool(
      [
        "-XMP-xmp:Rating=9", "-XMP-exif:DateTimeOriginal=0000:01:01 00:00:00", "-XMP-dc:Subject=ok",
        "a.jpg.xmp",
      ],
      in: folder)
    let metadata = try AssetMetadata.read(path: path)
    #expect(metadata.keywords == ["ok"] && metadata.rating == nil)
    #expect(metadata.captureDate?.iso8601 == "2023-12-31T23:59:58.250-03:00")
    #expect(
      metadata.warnings == [
        "a.jpg.xmp: rating 9 is not -1 to 5; ignored",
        "a.jpg.xmp: date 0000-01-01T00:00:00 is not a date Darkroom reads; ignored",
      ])
    let library = try Library.create(at: folder.path)
    #expect(try library.scanBlocking().added == 1)
  }

  @Test("scan takes a sidecar's date, and sees it change or go; the photo is never touched")
  func scan() throws {
    let (folder, path) = try photo()
    let before = try Fixture.bytes(path)
    let attributes = try FileManager.default.attributesOfItem(atPath: path)
    try exiftool(["-XMP-exif:DateTimeOriginal=2019:04:01 09:00:00+02:00", "a.jpg.xmp"], in: folder)
    let library = try Library.create(at: folder.path)
    _ = try library.scanBlocking()
    func date() throws -> Double? {
      try library.assets(matching: AssetQuery()).asset(at: 0).captureDate
    }
    #expect(try date() == 1_554_102_000)  // 2019-04-01T07:00:00Z
    try exiftool(["-XMP-exif:DateTimeOriginal=2020:05:05 10:00:00+02:00", "a.jpg.xmp"], in: folder)
    #expect(try library.scanBlocking().changed == 1)
    #expect(try date() == 1_588_665_600)
    try FileManager.default.removeItem(atPath: folder.file("a.jpg.xmp"))
    _ = try library.scanBlocking()
    #expect(try date() == 1_704_077_998.25)  // the file's own: 2023-12-31T23:59:58.25-03:00
    let unchanged = try library.scanBlocking()
    #expect(unchanged.changed == 0 && unchanged.added == 0)
    #expect(try Fixture.bytes(path) == before)
    let after = try FileManager.default.attributesOfItem(atPath: path)
    #expect(after[.modificationDate] as? Date == attributes[.modificationDate] as? Date)
    #expect(after[.posixPermissions] as? Int == attributes[.posixPermissions] as? Int)
  }

  @Test("captions, ratings and keywords are catalogued, and list and the API filter by them alike")
  func filters() async throws {
    let folder = try TemporaryFolder()
    for name in ["a.jpg", "b.jpg", "c.jpg"] {
      try FileManager.default.copyItem(atPath: Fixture.sample("gps.jpg"), toPath: folder.file(name))
    }
    // Made distinct (one content is one asset), then described by sidecars of both names.
    try exiftool(["-EXIF:ImageDescription=b", "b.jpg"], in: folder)
    try exiftool(["-EXIF:ImageDescription=c", "c.jpg"], in: folder)
    try exiftool(
      [
        "-XMP-xmp:Rating=5", "-XMP-dc:Description=Pikes Peak at dawn", "-XMP-dc:Subject=Colorado",
        "a.jpg.xmp",
      ],
      in: folder)
    try exiftool(
      ["-XMP-xmp:Rating=4", "-XMP-dc:Subject=colorado", "-XMP-dc:Subject=lake", "b.xmp"], in: folder
    )
    try exiftool(["-XMP-xmp:Rating=-1", "c.jpg.xmp"], in: folder)
    let library = try Library.create(at: folder.path)
    #expect(try await library.scan().added == 3)
    let a = try #require(try library.asset(atPath: folder.file("a.jpg")))
    #expect(a.caption == "Pikes Peak at dawn" && a.rating == 5 && a.keywords == ["Colorado"])

    func listed(_ options: [String]) throws -> [String] {
      let run = try CLI.run(["list", "--sort", "name"] + options, cwd: folder.path)
      #expect(run.status == 0, "\(options): \(run.stderr)")
      return run.stdout.split(separator: "\n").map(String.init)
    }
    #expect(try listed(["--rating", ">=4"]) == ["a.jpg", "b.jpg"])
    #expect(try listed(["--rating", "-1"]) == ["c.jpg"])
    #expect(try listed(["--rating", "5-4"]) == ["a.jpg", "b.jpg"])
    #expect(try listed(["--keyword", "COLORADO"]) == ["a.jpg", "b.jpg"])
    #expect(try listed(["--keyword", "color"]) == [], "a keyword is matched whole")
    #expect(try listed(["--text", "peak"]) == ["a.jpg"])
    #expect(try listed(["--text", "lake"]) == ["b.jpg"])
    let bad = try CLI.run(["list", "--rating", ">=9"], cwd: folder.path)
    #expect(bad.status == 2)
    #expect(
      bad.stderr.contains("--rating takes a rating from -1 to 5, or >=N, <=N or N-M; not >=9"))

    // The API takes the same words and answers the same assets.
    let served = ServedLibrary(over: library, in: folder)
    try await served.test { client, _ in
      for (query, names) in [
        ("rating=%3E%3D4", ["a.jpg", "b.jpg"]), ("keyword=colorado", ["a.jpg", "b.jpg"]),
        ("text=peak", ["a.jpg"]),
      ] {
        let response = try await client.execute(
          uri: "/api/assets?sort=name&" + query, method: .get, headers: ServedLibrary.read)
        let page = try #require(
          try JSONSerialization.jsonObject(with: Data(response.bytes)) as? [String: Any])
        let assets = try #require(page["assets"] as? [[String: Any]])
        #expect(assets.compactMap { $0["path"] as? String } == names, "\(query)")
        if query == "text=peak" {
          #expect(assets.first?["caption"] as? String == "Pikes Peak at dawn")
          #expect(assets.first?["rating"] as? Int == 5)
          #expect(assets.first?["keywords"] as? [String] == ["Colorado"])
        }
      }
      let refused = try await client.execute(
        uri: "/api/assets?rating=9", method: .get, headers: ServedLibrary.read)
      #expect(refused.status == .badRequest)
    }
  }

  /// What exiftool reads from a sidecar, as JSON.
  private func exifRead(_ file: String, in folder: TemporaryFolder) throws -> [String: Any] {
    let run = try CLI.run(
      ["-j", "-XMP:all", file], cwd: folder.path, executable: "/usr/bin/exiftool")
    #expect(run.status == 0, "\(run.stderr)")
    let list = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [[String: Any]]
    return list?.first ?? [:]
  }

  @Test("meta writes a sidecar exiftool reads back, keeps what it did not write, never the photo")
  func metaWrites() async throws {
    let (folder, path) = try photo()
    try exiftool(
      [
        "-XMP-dc:Creator=Ann", "-XMP-xmp:Label=Red", "-XMP-xmp:Rating=2", "-XMP-dc:Subject=old",
        "-XMP-dc:Subject=keep", "-XMP-lr:HierarchicalSubject=Tags|old",
        "-XMP-lr:HierarchicalSubject=Tags|keep", "a.jpg.xmp",
      ], in: folder)
    let sidecarBefore = try Fixture.bytes(folder.file("a.jpg.xmp"))
    chmod(path, 0o640)
    let photoBefore = try Fixture.bytes(path)
    let attributes = try FileManager.default.attributesOfItem(atPath: path)
    let library = try Library.create(at: folder.path)
    _ = try await library.scan()
    let start = try library.lastChange()

    let run = try CLI.run(
      [
        "meta", "a.jpg", "--rating", "4", "--description", "Longs Peak & <dawn>",
        "--add-keyword", "Colorado", "--remove-keyword", "old",
      ], cwd: folder.path)
    #expect(run.status == 0, "\(run.stderr)")
    #expect(
      run.stdout
        == "a.jpg: rating 4; keywords keep, Colorado; description \"Longs Peak & <dawn>\"\n")
    let read = try exifRead("a.jpg.xmp", in: folder)
    #expect(read["Rating"] as? Int == 4)
    #expect(read["Description"] as? String == "Longs Peak & <dawn>")
    #expect(read["Subject"] as? [String] == ["keep", "Colorado"])
    #expect(read["HierarchicalSubject"] as? String == "Tags|keep")
    #expect(read["Creator"] as? String == "Ann" && read["Label"] as? String == "Red")
    // The photo is as it was; the sidecar as it was is kept by its hash, read-only.
    #expect(try Fixture.bytes(path) == photoBefore)
    let after = try FileManager.default.attributesOfItem(atPath: path)
    #expect(after[.modificationDate] as? Date == attributes[.modificationDate] as? Date)
    #expect(after[.posixPermissions] as? Int == 0o640)
    let kept = folder.file(".darkroom/originals/" + ContentHash.of(bytes: sidecarBefore).hex)
    #expect(try Fixture.bytes(kept) == sidecarBefore)
    // The catalog knows at once, the change log says so once, and list and the API agree.
    let changes = try library.changes(since: start)
    #expect(changes.map(\.path) == ["a.jpg"] && changes.first?.kind == .changed, "\(changes)")
    let listed = try CLI.run(["list", "--rating", "4", "--keyword", "colorado"], cwd: folder.path)
    #expect(listed.stdout == "a.jpg\n", "\(listed.stderr)")
    let id = try #require(try library.asset(atPath: path)).id
    let served = ServedLibrary(over: library, in: folder)
    let sidecar = folder.file("a.jpg.xmp")
    try await served.test { client, _ in
      let response = try await client.execute(
        uri: "/api/assets/\(id)/metadata", method: .patch, headers: ServedLibrary.write,
        body: jsonBody(["rating": 2, "keywords": ["lake"], "caption": ""]))
      #expect(response.status == .ok, "\(response.text)")
      #expect(response.object["rating"] as? Int == 2)
      #expect(response.object["keywords"] as? [String] == ["lake"])
      #expect(response.object["caption"] == nil, "the photo has no description of its own")
      // Each a 400 with a JSON error: the engine's refusals, and a body of the wrong shape.
      for (body, kind) in [
        (["rating": 9] as [String: Any], "invalid-argument"),
        (["keywords": [" "]], "invalid-argument"),
        (["caption": "a\u{1}b"], "invalid-argument"), (["removeKeywords": "lake"], "http"),
      ] {
        let refused = try await client.execute(
          uri: "/api/assets/\(id)/metadata", method: .patch, headers: ServedLibrary.write,
          body: jsonBody(body))
        #expect(refused.status == .badRequest, "\(body): \(refused.text)")
        #expect(refused.errorKind == kind, "\(body)")
      }
      // Nothing to change: the asset as it is, and no sidecar written.
      let before = try Fixture.bytes(sidecar)
      let nothing = try await client.execute(
        uri: "/api/assets/\(id)/metadata", method: .patch, headers: ServedLibrary.write,
        body: jsonBody([:]))
      #expect(nothing.status == .ok && nothing.object["rating"] as? Int == 2)
      #expect(try Fixture.bytes(sidecar) == before)
      let unknown = try await client.execute(
        uri: "/api/assets/01ARZ3NDEKTSV4RRFFQ69G5FAV/metadata", method: .patch,
        headers: ServedLibrary.write, body: jsonBody(["rating": 1]))
      #expect(unknown.status == .notFound)
      let readOnly = try await client.execute(
        uri: "/api/assets/\(id)/metadata", method: .patch, headers: ServedLibrary.read,
        body: jsonBody(["rating": 1]))
      #expect(readOnly.status == .forbidden)
    }
    // In the trash: a conflict on every door (restore it first), and nothing written.
    _ = try library.trash([id])
    let trashedSidecar = try Fixture.bytes(folder.file(".darkroom/trash/\(id)/a.jpg.xmp"))
    let byCLI = try CLI.run(["meta", id.rawValue, "--rating", "1"], cwd: folder.path)
    #expect(byCLI.status == 1)
    #expect(byCLI.stderr.hasSuffix("a.jpg: is in the trash: restore it first\n"), "\(byCLI.stderr)")
    try await served.test { client, _ in
      let refused = try await client.execute(
        uri: "/api/assets/\(id)/metadata", method: .patch, headers: ServedLibrary.write,
        body: jsonBody(["rating": 1]))
      #expect(refused.status == .conflict && refused.errorKind == "conflict", "\(refused.text)")
    }
    #expect(try Fixture.bytes(folder.file(".darkroom/trash/\(id)/a.jpg.xmp")) == trashedSidecar)
    // A sidecar in its sidecar's place: the restore is refused, and nothing moves.
    let stranger = try folder.write("a.jpg.xmp", Array("<x/>".utf8))
    #expect(throws: DarkroomError.self) { try library.restore([id]) }
    #expect(try library.asset(id).trashedAt != nil)
    try FileManager.default.removeItem(atPath: stranger)
    _ = try library.restore([id])
    let again = try exifRead("a.jpg.xmp", in: folder)
    #expect(again["Rating"] as? Int == 2 && again["Subject"] as? String == "lake")
    #expect(again["Description"] == nil && again["HierarchicalSubject"] == nil)
    #expect(again["Creator"] as? String == "Ann")
    let byAPI = try CLI.run(["list", "--rating", "2", "--keyword", "lake"], cwd: folder.path)
    #expect(byAPI.stdout == "a.jpg\n", "\(byAPI.stderr)")
    #expect(try Fixture.bytes(path) == photoBefore)
  }

  @Test("meta on a loose photo makes a new sidecar with the photo's mode; --no-keywords clears")
  func metaLoose() throws {
    let (folder, path) = try photo()
    chmod(path, 0o600)
    let run = try CLI.run(["meta", path, "--keyword", "a", "--rating", "0", "--json"])
    #expect(run.status == 0, "\(run.stderr)")
    let printed = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [[String: Any]]
    #expect(printed?.first?["keywords"] as? [String] == ["a"])
    #expect(printed?.first?["rating"] as? Int == 0)
    let mode = try FileManager.default.attributesOfItem(atPath: path + ".xmp")[.posixPermissions]
    #expect(mode as? Int == 0o600)
    #expect(try exifRead("a.jpg.xmp", in: folder)["Subject"] as? String == "a")
    let cleared = try CLI.run(["meta", path, "--no-keywords"])
    #expect(cleared.stdout == path + ": rating 0; keywords none\n", "\(cleared.stderr)")
    // An empty dc:subject in the sidecar: no keywords, over whatever the photo says.
    #expect(try AssetMetadata.read(path: path).sources["keywords"] == "a.jpg.xmp")
  }

  @Test("meta leaves a sidecar it cannot read, or a link, as it is, with an exact error")
  func metaRefuses() throws {
    let (folder, path) = try photo()
    // A video: no sidecar is read for one yet, so none is written.
    try FileManager.default.copyItem(
      atPath: Fixture.sample("clip.mov"), toPath: folder.file("clip.mov"))
    let library = try Library.create(at: folder.path)
    _ = try library.scanBlocking()
    let video = try CLI.run(["meta", folder.file("clip.mov"), "--rating", "3"])
    #expect(video.status == 1)
    #expect(
      video.stderr
        == "darkroom: \(folder.file("clip.mov")): is a video: Darkroom reads no sidecar of a video yet\n"
    )
    #expect(!FileManager.default.fileExists(atPath: folder.file("clip.mov.xmp")))
    let broken = Array("<x:xmpmeta><rdf:Description>".utf8)
    try Data(broken).write(to: URL(fileURLWithPath: path + ".xmp"))
    let run = try CLI.run(["meta", path, "--rating", "3"])
    #expect(run.status == 1)
    #expect(
      run.stderr
        == "darkroom: \(path).xmp: is not XMP Darkroom can update (it ends inside an element): it was left as it is\n"
    )
    #expect(try Fixture.bytes(path + ".xmp") == broken)
    try FileManager.default.removeItem(atPath: path + ".xmp")
    let target = try folder.write("elsewhere.xmp", Array("keep me".utf8))
    try FileManager.default.createSymbolicLink(atPath: path + ".xmp", withDestinationPath: target)
    let link = try CLI.run(["meta", path, "--rating", "3"])
    #expect(link.status == 1)
    #expect(
      link.stderr
        == "darkroom: \(path).xmp: is not a regular file: Darkroom writes no sidecar through a link or over a folder\n"
    )
    #expect(try Fixture.bytes(target) == Array("keep me".utf8))
    let usage = try CLI.run(["meta", path, "--rating", "9"])
    #expect(usage.status == 2)
    #expect(
      usage.stderr.hasPrefix(
        "darkroom: Rating 9 is not -1 (rejected), 0 (none) or 1 to 5 stars\n"))
    let nothing = try CLI.run(["meta", path])
    #expect(nothing.status == 2)
    #expect(
      nothing.stderr.hasPrefix(
        "darkroom: Nothing to change: give --description, --rating or keywords\n"))
  }

  @Test(
    "dates: each source alone is read, and each beats every one below it in the documented order")
  func datePriority() throws {
    let (folder, path) = try photo()
    // No position either: a time zone would give the dates without one an offset
    // (PlaceTests checks that).
    try exiftool(
      [
        "-AllDates=", "-SubSecTimeOriginal=", "-OffsetTimeOriginal=", "-GPSLatitude=",
        "-GPSLongitude=", "-GPSLatitudeRef=", "-GPSLongitudeRef=", "a.jpg",
      ], in: folder)
    let bare = try Fixture.bytes(path)
    func read() throws -> (String?, String?) {
      let metadata = try AssetMetadata.read(path: path)
      return (metadata.captureDate?.iso8601, metadata.sources["captureDate"])
    }
    #expect(try read() == (nil, nil))
    // Lowest first: each step adds a source, which must win over all those already there.
    let steps: [([String], String, String, String)] = [
      (
        ["-GPS:GPSDateStamp=2010:01:01", "-GPS:GPSTimeStamp=12:00:00.05", "a.jpg"],
        "2010-01-01T12:00:00.050+00:00", "GPS", "gps"
      ),
      (
        ["-IPTC:DateCreated=2011:02:02", "-IPTC:TimeCreated=13:00:00+02:00", "a.jpg"],
        "2011-02-02T13:00:00+02:00", "IPTC", "iptc"
      ),
      (
        ["-XMP-photoshop:DateCreated=2012:03:03 14:00:00", "a.jpg"], "2012-03-03T14:00:00", "XMP",
        "xmp"
      ),
      (
        ["-EXIF:CreateDate=2013:04:04 15:00:00", "-EXIF:OffsetTimeDigitized=-05:00", "a.jpg"],
        "2013-04-04T15:00:00-05:00", "EXIF CreateDate", "create"
      ),
      (
        ["-EXIF:DateTimeOriginal=2014:05:05 16:00:00", "-EXIF:SubSecTimeOriginal=5", "a.jpg"],
        "2014-05-05T16:00:00.5", "EXIF", "original"
      ),
      (
        ["-XMP-exif:DateTimeOriginal=2015:06:06 17:00:00", "a.xmp"], "2015-06-06T17:00:00", "a.xmp",
        "-"
      ),
      (
        ["-XMP-photoshop:DateCreated=2016:07:07 18:00:00+09:00", "a.jpg.xmp"],
        "2016-07-07T18:00:00+09:00", "a.jpg.xmp", "-"
      ),
    ]
    var alone: [([UInt8], String, String)] = []
    for (arguments, date, source, name) in steps {
      try exiftool(arguments, in: folder)
      #expect(try read() == (date, source), "\(arguments)")
      // The same source by itself, in a copy of the bare photo.
      if name != "-" {
        let single = try folder.write("single-\(name).jpg", bare)
        try exiftool(arguments.dropLast() + ["single-\(name).jpg"], in: folder)
        alone.append((try Fixture.bytes(single), date, source))
      }
    }
    for (bytes, date, source) in alone {
      let metadata = try AssetMetadata.read(.data(bytes, name: "single"))
      #expect(metadata.captureDate?.iso8601 == date && metadata.sources["captureDate"] == source)
    }
  }

  @Test(
    "EXIF's caption, rating and keywords; IPTC's (Latin-1 and UTF-8) over them; embedded XMP over IPTC"
  )
  func iptc() throws {
    let (folder, path) = try photo()
    // Windows' tags: Rating, and XPKeywords (UTF-16, separated by ';').
    try exiftool(
      [
        "-EXIF:ImageDescription=from EXIF", "-EXIF:Rating=3", "-EXIF:XPKeywords=alpine; l\u{E4}ke",
        "a.jpg",
      ], in: folder)
    let exif = try AssetMetadata.read(path: path)
    #expect(exif.caption == "from EXIF" && exif.rating == 3)
    #expect(exif.keywords == ["alpine", "l\u{E4}ke"])
    #expect(
      [exif.sources["caption"], exif.sources["rating"], exif.sources["keywords"]]
        == ["EXIF", "EXIF", "EXIF"])
    try exiftool(
      [
        "-EXIF:ImageDescription=from EXIF", "-IPTC:Caption-Abstract=Caf\u{E9} au lait",
        "-IPTC:Keywords=Z\u{FC}rich", "-IPTC:Keywords=lake", "a.jpg",
      ], in: folder)
    var metadata = try AssetMetadata.read(path: path)
    #expect(metadata.caption == "Caf\u{E9} au lait" && metadata.sources["caption"] == "IPTC")
    #expect(metadata.keywords == ["Z\u{FC}rich", "lake"] && metadata.sources["keywords"] == "IPTC")
    // Latin-1 by default; UTF-8 when the records say so.
    let latin = try CLI.run(
      [
        "-q", "-overwrite_original", "-charset", "iptc=Latin", "-IPTC:Keywords=na\u{EF}ve", "a.jpg",
      ],
      cwd: folder.path, executable: "/usr/bin/exiftool")
    #expect(latin.status == 0, "\(latin.stderr)")
    #expect(try AssetMetadata.read(path: path).keywords.last == "na\u{EF}ve")
    try exiftool(["-XMP-dc:Description=from XMP", "-XMP-dc:Subject=xmp", "a.jpg"], in: folder)
    metadata = try AssetMetadata.read(path: path)
    #expect(metadata.caption == "from XMP" && metadata.sources["caption"] == "XMP")
    #expect(metadata.keywords == ["xmp"] && metadata.sources["keywords"] == "XMP")
  }

  @Test("a worker's reply carries captions, ratings, keywords, sources and warnings whole")
  func workerReply() throws {
    let (folder, path) = try photo()
    try exiftool(
      ["-XMP-dc:Description=From a worker", "-XMP-xmp:Rating=-1", "-XMP-dc:Subject=w", "a.jpg"],
      in: folder)
    var metadata = try AssetMetadata.read(path: path)
    metadata.warnings = ["a.xmp: not read (a test)"]
    let wire = try JSONDecoder().decode(
      MetadataWire.self, from: try JSONEncoder().encode(MetadataWire(metadata)))
    let back = try #require(wire.metadata)
    #expect(back.caption == "From a worker" && back.rating == -1 && back.keywords == ["w"])
    #expect(back.sources == metadata.sources && back.warnings == metadata.warnings)
    #expect(back.captureDate == metadata.captureDate && back.location == metadata.location)
  }

  @Test("people: MWG region names and Microsoft's people tags, in info, the catalog and search")
  func people() async throws {
    let (folder, path) = try photo()
    try exiftool(
      [
        "-XMP-mwg-rs:RegionInfo={RegionList=[{Name=Ann Lee,Type=Face,"
          + "Area={X=0.5,Y=0.5,W=0.1,H=0.1,Unit=normalized}},{Name=Rex,Type=Pet}]}",
        "-XMP-MP:RegionInfoMP={Regions=[{PersonDisplayName=Bob},{PersonDisplayName=Ann Lee}]}",
        "-XMP-dc:Subject=kept", "a.jpg.xmp",
      ], in: folder)
    let metadata = try AssetMetadata.read(path: path)
    #expect(metadata.people == ["Ann Lee", "Rex", "Bob"])
    #expect(metadata.sources["people"] == "a.jpg.xmp" && metadata.keywords == ["kept"])
    // A structure's fields are not top-level properties: meta leaves the regions alone.
    let run = try CLI.run(["meta", path, "--rating", "5"])
    #expect(run.status == 0, "\(run.stderr)")
    #expect(try AssetMetadata.read(path: path).people == ["Ann Lee", "Rex", "Bob"])
    let library = try Library.create(at: folder.path)
    _ = try await library.scan()
    #expect(try library.asset(atPath: path)?.people == ["Ann Lee", "Rex", "Bob"])
    let found = try CLI.run(["list", "--text", "ann lee"], cwd: folder.path)
    #expect(found.stdout == "a.jpg\n", "\(found.stderr)")
  }

  @Test("exiv2's sidecar (attributes, NAME.xmp) is read, and meta rewrites its attributes in place")
  func exiv2() throws {
    let (folder, path) = try photo()
    let written = try CLI.run(
      [
        "-M", "set Xmp.xmp.Rating 3", "-M", "set Xmp.dc.subject Colorado",
        "-M", "set Xmp.dc.description lang=x-default Pikes Peak",
        "-M", "set Xmp.photoshop.DateCreated 2019-04-01T09:00:00+02:00", path,
      ], executable: "/usr/bin/exiv2")
    #expect(written.status == 0, "\(written.stderr)")
    let extracted = try CLI.run(["-eX", path], executable: "/usr/bin/exiv2")  // a.xmp
    #expect(extracted.status == 0, "\(extracted.stderr)")
    // The photo's own XMP now says the same; a sidecar must win over something else.
    try exiftool(["-XMP:all=", "a.jpg"], in: folder)
    var metadata = try AssetMetadata.read(path: path)
    #expect(metadata.rating == 3 && metadata.keywords == ["Colorado"])
    #expect(metadata.caption == "Pikes Peak" && metadata.sources["rating"] == "a.xmp")
    #expect(metadata.captureDate?.iso8601 == "2019-04-01T09:00:00+02:00")
    // As NAME.EXT.xmp, its attribute xmp:Rating="3" is replaced where it stands.
    try FileManager.default.moveItem(atPath: folder.file("a.xmp"), toPath: path + ".xmp")
    let run = try CLI.run(["meta", path, "--rating", "1", "--add-keyword", "snow"])
    #expect(run.status == 0, "\(run.stderr)")
    let text = String(decoding: try Fixture.bytes(path + ".xmp"), as: UTF8.self)
    #expect(!text.contains("xmp:Rating=\"3\""))
    #expect(text.contains("tiff:Make=\"Darkroom\""), "the rest kept")
    let read = try exifRead("a.jpg.xmp", in: folder)
    #expect(read["Rating"] as? Int == 1 && read["Subject"] as? [String] == ["Colorado", "snow"])
    #expect(read["Description"] as? String == "Pikes Peak")
    metadata = try AssetMetadata.read(path: path)
    #expect(metadata.rating == 1 && metadata.sources["rating"] == "a.jpg.xmp")
  }

  @Test("XMP inside a PNG (an iTXt chunk, as exiftool writes it) is read like a JPEG's")
  func pngXMP() throws {
    let folder = try TemporaryFolder()
    let path = folder.file("a.png")
    try FileManager.default.copyItem(atPath: Fixture.sample("alpha.png"), toPath: path)
    try exiftool(
      ["-XMP-xmp:Rating=3", "-XMP-dc:Subject=png", "-XMP-dc:Description=In a PNG", "a.png"],
      in: folder)
    let metadata = try AssetMetadata.read(path: path)
    #expect(metadata.rating == 3 && metadata.keywords == ["png"])
    #expect(metadata.caption == "In a PNG" && metadata.sources["caption"] == "XMP")
    #expect(metadata.hasAlpha && metadata.width > 0)
  }
}
