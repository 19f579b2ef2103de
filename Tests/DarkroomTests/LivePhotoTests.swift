import Darkroom
import DarkroomServer
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

/// Live and motion photos: a still and its video are one asset. Google's motion photo (a
/// JPEG with an MP4 appended and the XMP Google's camera writes), the older MicroVideo form,
/// and Apple's Live Photo (a JPEG or HEIC and a MOV of the same name), made here with
/// exiftool and ffmpeg; every door (CLI, engine, API) gives the same video bytes.
@Suite("live and motion photos", .timeLimit(.minutes(5)), .offThePool)
struct LivePhotoTests {
  /// A one-second clip (MP4 or MOV by `name`'s extension) that FFmpeg reads back.
  static func clip(_ name: String, in folder: TemporaryFolder, source: String = "testsrc2")
    throws -> [UInt8]
  {
    try VideoTests.ffmpeg(
      [
        "-f", "lavfi", "-i", "\(source)=size=320x240:rate=10", "-t", "1", "-pix_fmt", "yuv420p",
        "-c:v", "libx264", name,
      ], in: folder)
    return try Fixture.bytes(folder.file(name))
  }

  /// The XMP Google's camera writes for a motion photo whose video is `length` bytes.
  static func googleXMP(length: Int) -> String {
    """
    <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">\
    <rdf:Description rdf:about="" xmlns:GCamera="http://ns.google.com/photos/1.0/camera/" \
    xmlns:Container="http://ns.google.com/photos/1.0/container/" \
    xmlns:Item="http://ns.google.com/photos/1.0/container/item/" GCamera:MotionPhoto="1" \
    GCamera:MotionPhotoVersion="1" GCamera:MotionPhotoPresentationTimestampUs="500000">\
    <Container:Directory><rdf:Seq>\
    <rdf:li rdf:parseType="Resource"><Container:Item Item:Mime="image/jpeg" Item:Semantic="Primary" Item:Length="0" Item:Padding="0"/></rdf:li>\
    <rdf:li rdf:parseType="Resource"><Container:Item Item:Mime="video/mp4" Item:Semantic="MotionPhoto" Item:Length="\(length)" Item:Padding="0"/></rdf:li>\
    </rdf:Seq></Container:Directory></rdf:Description></rdf:RDF></x:xmpmeta>
    """
  }

  /// The sample JPEG with `xmp` written by exiftool, then `video` appended: a motion photo.
  static func motionPhoto(
    _ name: String, xmp: String, video: [UInt8], in folder: TemporaryFolder
  ) throws -> String {
    let still = folder.file(name + ".still.jpg")
    try FileManager.default.copyItem(atPath: Fixture.sample("gps.jpg"), toPath: still)
    let packet = try folder.write(name + ".xmp", Array(xmp.utf8))
    let wrote = try CLI.run(
      ["-q", "-overwrite_original", "-xmp<=\(packet)", still], executable: "/usr/bin/exiftool")
    #expect(wrote.status == 0, "\(wrote.stderr)")
    return try folder.write(name, Fixture.bytes(still) + video)
  }

  /// The trailer Samsung's camera appended to a motion photo's JPEG before its phones wrote
  /// Google's XMP (as ExifTool reads it): a UTC time block, the `MotionPhoto_Data` block holding
  /// `video`, then the `SEFH` directory of both, its length, and `SEFT`.
  static func samsungTrailer(_ video: [UInt8]) -> [UInt8] {
    func number(_ value: Int) -> [UInt8] { (0..<4).map { UInt8((value >> (8 * $0)) & 0xFF) } }
    func block(_ type: UInt8, _ name: String, _ data: [UInt8]) -> [UInt8] {
      [0, 0, type, 0x0A] + number(name.utf8.count) + Array(name.utf8) + data
    }
    let time = block(0x01, "Image_UTC_Data", Array("1546344000000".utf8))
    let motion = block(0x30, "MotionPhoto_Data", video)
    let directory =
      Array("SEFH".utf8) + number(107) + number(2)
      + [0, 0, 0x01, 0x0A] + number(time.count + motion.count) + number(time.count)
      + [0, 0, 0x30, 0x0A] + number(motion.count) + number(motion.count)
    return time + motion + directory + number(directory.count) + Array("SEFT".utf8)
  }

  @Test(
    "a Google motion photo's video is found from its XMP, read back byte for byte and by FFmpeg; the older MicroVideo form and Samsung's trailer too; a wrong length is one line and leaves nothing"
  )
  func motionPhotos() throws {
    let folder = try TemporaryFolder()
    let video = try Self.clip("clip.mp4", in: folder)
    let photo = try Self.motionPhoto(
      "PXL_1.MP.jpg", xmp: Self.googleXMP(length: video.count), video: video, in: folder)
    let size = try Fixture.bytes(photo).count

    let info = try CLI.run(["info", "--json", photo])
    let entry = try #require(
      (try JSONSerialization.jsonObject(with: info.stdoutData) as? [[String: Any]])?.first)
    let range = try #require(entry["motionVideo"] as? [String: Int], "\(info.stdout)")
    #expect(range == ["offset": size - video.count, "length": video.count])
    #expect(entry["liveVideo"] is NSNull)
    let text = try CLI.run(["info", photo])
    #expect(
      text.stdout.contains(
        "Motion photo  a video of \(video.count) bytes at byte \(size - video.count)"),
      "\(text.stdout)")

    let out = folder.file("out.mp4")
    let rendered = try CLI.run(["render", "--rep", "video", photo, "-o", out])
    #expect(rendered.status == 0, "\(rendered.stderr)")
    #expect(rendered.stdout == out + "\n")
    #expect(try Fixture.bytes(out) == video)
    let probe = try CLI.run(
      ["-v", "error", "-i", out, "-f", "null", "-"], executable: "/usr/bin/ffmpeg")
    #expect(probe.status == 0 && probe.stderr.isEmpty, "\(probe.stderr)")
    // Beside the input without -o, named for the representation.
    let beside = try CLI.run(["render", "--rep", "video", photo])
    #expect(beside.stdout == folder.file("PXL_1.MP.video.mp4") + "\n", "\(beside.stderr)")

    // Google's older form: the video's distance from the end, as GCamera:MicroVideoOffset.
    let micro = try Self.motionPhoto(
      "MVIMG_2.jpg",
      xmp: """
        <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">\
        <rdf:Description rdf:about="" xmlns:GCamera="http://ns.google.com/photos/1.0/camera/" \
        GCamera:MicroVideo="1" GCamera:MicroVideoVersion="1" GCamera:MicroVideoOffset="\(video.count)"/>\
        </rdf:RDF></x:xmpmeta>
        """, video: video, in: folder)
    let microOut = folder.file("micro.mp4")
    #expect(try CLI.run(["render", "--rep", "video", micro, "-o", microOut]).status == 0)
    #expect(try Fixture.bytes(microOut) == video)

    // Samsung's older form, with no XMP: the MP4 in its trailer's `MotionPhoto_Data` block,
    // after the time block (35 bytes) and the block's own type and name (24).
    let still = try Fixture.bytes(Fixture.sample("gps.jpg"))
    let samsung = try folder.write("20190101_120000.jpg", still + Self.samsungTrailer(video))
    let samsungInfo = try CLI.run(["info", "--json", samsung])
    let samsungEntry = try #require(
      (try JSONSerialization.jsonObject(with: samsungInfo.stdoutData) as? [[String: Any]])?.first)
    #expect(
      samsungEntry["motionVideo"] as? [String: Int]
        == ["offset": still.count + 35 + 24, "length": video.count], "\(samsungInfo.stdout)")
    #expect(samsungEntry["damage"] is NSNull)  // the JPEG's end is found before the trailer
    let samsungOut = folder.file("samsung.mp4")
    #expect(try CLI.run(["render", "--rep", "video", samsung, "-o", samsungOut]).status == 0)
    #expect(try Fixture.bytes(samsungOut) == video)
    // A trailer whose directory points outside the file names no video.
    var broken = still + Self.samsungTrailer(video)
    broken[broken.count - 16 + 3] = 0x7F  // the motion block's distance back, made huge
    let brokenPath = try folder.write("20190101_120001.jpg", broken)
    let brokenInfo = try CLI.run(["info", "--json", brokenPath])
    #expect(brokenInfo.status == 0)
    #expect(brokenInfo.stdout.contains("\"motionVideo\" : null"), "\(brokenInfo.stdout)")

    // A length that points into the JPEG: one line naming the file, nothing written.
    let wrong = try Self.motionPhoto(
      "PXL_3.MP.jpg", xmp: Self.googleXMP(length: video.count + 999), video: video, in: folder)
    let before = try Fixture.bytes(wrong)
    let beforeStat = try FileStat(wrong)
    let failed = try CLI.run(["render", "--rep", "video", wrong, "-o", folder.file("bad.mp4")])
    #expect(failed.status == 1)
    #expect(
      failed.stderr
        == "darkroom: \(wrong): its motion photo video is damaged (no MP4 header where its metadata says it starts)\n"
    )
    #expect(!FileManager.default.fileExists(atPath: folder.file("bad.mp4")))
    #expect(try Fixture.bytes(wrong) == before)
    #expect(try FileStat(wrong) == beforeStat)
    // A still alone has no video.
    let plain = try CLI.run(["render", "--rep", "video", Fixture.sample("gps.jpg"), "-o", "-"])
    #expect(plain.status == 1)
    #expect(
      plain.stderr
        == "darkroom: \(Fixture.sample("gps.jpg")): has no video: it is not a live or motion photo\n"
    )
  }

  @Test(
    "an edit of a motion photo keeps its video (Google's XMP, Samsung's trailer, a HEIC's mpvd box): read back byte for byte, described as Google's format says, revert gives the original; the API's edit the same"
  )
  func editsKeepTheVideo() async throws {
    let folder = try TemporaryFolder()
    let video = try Self.clip("clip.mp4", in: folder)
    let google = try Self.motionPhoto(
      "PXL_1.MP.jpg", xmp: Self.googleXMP(length: video.count), video: video, in: folder)
    let samsung = try folder.write(
      "20190101_120000.jpg",
      Fixture.bytes(Fixture.sample("gps.jpg")) + Self.samsungTrailer(video))
    // A HEIC motion photo: libvips writes the still with its XMP (a `mime` item), the video
    // follows in a top-level `mpvd` box.
    let heicStill = folder.file("still.heic")
    let wrote = try CLI.run(
      ["copy", google + ".still.jpg", heicStill + "[Q=60]"], executable: "/usr/bin/vips")
    #expect(wrote.status == 0, "\(wrote.stderr)")
    let size = video.count + 8
    let box = [24, 16, 8, 0].map { UInt8((size >> $0) & 0xFF) } + Array("mpvd".utf8)
    let heic = try folder.write("PXL_2.MP.heic", Fixture.bytes(heicStill) + box + video)
    for (path, mime) in [(google, "image/jpeg"), (samsung, "image/jpeg"), (heic, "image/heic")] {
      let original = try Fixture.bytes(path)
      let edited = try CLI.run(["edit", path, "--filter", "noir"])
      #expect(edited.status == 0, "\(path): \(edited.stderr)")
      #expect(try Fixture.bytes(path) != original)
      let out = path + ".out.mp4"
      let rendered = try CLI.run(["render", "--rep", "video", path, "-o", out])
      #expect(rendered.status == 0, "\(path): \(rendered.stderr)")
      #expect(try Fixture.bytes(out) == video, "\(path)")
      // ExifTool reads Google's description of the edited file.
      let described = try CLI.run(
        [
          "-a", "-s3", "-XMP-GCamera:MotionPhoto", "-XMP-Container:DirectoryItemMime",
          "-XMP-Container:DirectoryItemLength", "-XMP-Container:DirectoryItemPadding", path,
        ],
        executable: "/usr/bin/exiftool")
      #expect(
        described.stdout
          == "1\n\(mime)\nvideo/mp4\n0\n\(video.count)\n0\n\(mime == "image/heic" ? 8 : 0)\n",
        "\(path): \(described.stdout)")
      // The still decodes as before (libheif reads past the appended box).
      let decoded = try CLI.run(["copy", path, path + ".png"], executable: "/usr/bin/vips")
      #expect(decoded.status == 0, "\(path): \(decoded.stderr)")
      let reverted = try CLI.run(["revert", path])
      #expect(reverted.status == 0, "\(reverted.stderr)")
      #expect(try Fixture.bytes(path) == original, "\(path)")
    }

    // The API's edit of a catalogued motion photo: the same.
    let served = try ServedLibrary(samples: ["gps.jpg"])
    try FileManager.default.copyItem(atPath: google, toPath: served.root + "/PXL_1.MP.jpg")
    _ = try await served.library.scan()
    let id = try #require(try served.library.asset(atPath: served.root + "/PXL_1.MP.jpg")?.id)
    try await served.test { client, _ in
      let edited = try await client.execute(
        uri: "/api/assets/\(id)/edit", method: .post, headers: ServedLibrary.write,
        body: jsonBody(["filters": ["noir"]]))
      #expect(edited.status == .ok, "\(edited.text)")
      let fetched = try await client.execute(
        uri: "/api/assets/\(id)/video", method: .get, headers: ServedLibrary.read)
      #expect(fetched.status == .ok)
      #expect(fetched.bytes == video)
    }
    #expect(try served.library.asset(id).motionVideo?.length == video.count)
  }

  /// An Apple maker note holding only a content identifier (tag 0x0011), as an iPhone
  /// writes it: `Apple iOS\0`, version 1, big-endian, one entry, the string after the IFD.
  static func appleMakerNote(identifier: String) -> [UInt8] {
    let text = Array(identifier.utf8) + [0]
    func be16(_ v: Int) -> [UInt8] { [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    func be32(_ v: Int) -> [UInt8] { be16(v >> 16) + be16(v) }
    let header = Array("Apple iOS\0".utf8) + [0, 1] + Array("MM".utf8)
    let entry = be16(0x0011) + be16(2) + be32(text.count) + be32(14 + 2 + 12 + 4)
    return header + be16(1) + entry + be32(0) + text
  }

  /// A JPEG still whose maker note says `identifier` (written by exiv2, Make Apple).
  static func stillSaying(_ identifier: String, at path: String) throws {
    try FileManager.default.copyItem(atPath: Fixture.sample("orientation-1.jpg"), toPath: path)
    let bytes = appleMakerNote(identifier: identifier).map(String.init).joined(separator: " ")
    let run = try CLI.run(
      [
        "-M", "set Exif.Image.Make Apple", "-M", "set Exif.Photo.MakerNote Undefined \(bytes)",
        path,
      ], executable: "/usr/bin/exiv2")
    #expect(run.status == 0, "exiv2: \(run.stderr)")
  }

  /// A MOV clip whose `meta` keys say `identifier` (nil: none), as an iPhone's Live Photo.
  static func movSaying(_ identifier: String?, named name: String, in folder: TemporaryFolder)
    throws
  {
    _ = try clip("plain-\(name)", in: folder)
    try VideoTests.ffmpeg(
      ["-i", "plain-\(name)", "-c", "copy"]
        + (identifier.map {
          [
            "-metadata", "com.apple.quicktime.content.identifier=\($0)", "-movflags",
            "use_metadata_tags",
          ]
        } ?? []) + [name], in: folder)
  }

  @Test(
    "Live Photos pair by Apple's content identifier: the still's maker note and the MOV's keys read; the same identifier pairs, different ones never do, one without does not, and neither pairs by name"
  )
  func contentIdentifiers() async throws {
    let folder = try TemporaryFolder()
    let id = "8A1B4A5E-2D4C-4F7B-9E3A-5C0D2B1E7F60"
    try Self.stillSaying(id, at: folder.file("A.JPG"))
    try Self.movSaying(id, named: "A.MOV", in: folder)
    try Self.stillSaying(id, at: folder.file("B.JPG"))
    try Self.movSaying("0F0E0D0C-0000-4000-8000-000000000000", named: "B.MOV", in: folder)
    try Self.stillSaying(id, at: folder.file("C.JPG"))
    try Self.movSaying(nil, named: "C.MOV", in: folder)
    try FileManager.default.copyItem(
      atPath: Fixture.sample("orientation-1.jpg"), toPath: folder.file("D.JPG"))
    try Self.movSaying(nil, named: "D.MOV", in: folder)
    for name in ["plain-A.MOV", "plain-B.MOV", "plain-C.MOV", "plain-D.MOV"] {
      try FileManager.default.removeItem(atPath: folder.file(name))
    }

    // What each file says, read as the scan reads it.
    let still = try AssetMetadata.read(.file(folder.file("A.JPG")))
    #expect(still.contentIdentifier == id)
    #expect(try VideoHeader.read(path: folder.file("A.MOV")).contentIdentifier == id)
    #expect(try VideoHeader.read(path: folder.file("C.MOV")).contentIdentifier == nil)

    var made = try Library.create(at: folder.path)
    made.catalogURL = nil
    let library = made
    let summary = try await library.scan()
    #expect(summary.liveVideos == 2, "\(summary)")
    func asset(_ name: String) throws -> Asset? { try library.asset(atPath: folder.file(name)) }
    #expect(try asset("A.JPG")?.liveVideo == "A.MOV" && (try asset("A.MOV")) == nil)
    #expect(try asset("B.JPG")?.liveVideo == nil)
    #expect(try asset("B.MOV")?.mediaType == .video)
    #expect(try asset("C.JPG")?.liveVideo == nil)
    #expect(try asset("C.MOV")?.mediaType == .video)
    #expect(try asset("D.JPG")?.liveVideo == "D.MOV" && (try asset("D.MOV")) == nil)
  }

  @Test(
    "a Live Photo's JPEG and MOV are one asset with the MOV's bytes as its video, and a catalogued motion photo's video is its MP4, through the CLI, the engine and the API (ranges too); the MOV alone is an asset again"
  )
  func livePhotos() async throws {
    let served = try ServedLibrary(samples: ["gps.jpg"])
    let folder = try TemporaryFolder()
    let mov = try Self.clip("IMG_0001.MOV", in: folder)
    _ = try Self.clip("other.mov", in: folder)
    let still = served.root + "/IMG_0001.JPG"
    try FileManager.default.copyItem(atPath: Fixture.sample("orientation-1.jpg"), toPath: still)
    try FileManager.default.copyItem(
      atPath: folder.file("IMG_0001.MOV"), toPath: served.root + "/IMG_0001.MOV")
    try FileManager.default.copyItem(
      atPath: folder.file("other.mov"), toPath: served.root + "/other.mov")
    let mp4 = try Self.clip("clip.mp4", in: folder)
    let motion = try Self.motionPhoto(
      "PXL_9.MP.jpg", xmp: Self.googleXMP(length: mp4.count), video: mp4, in: folder)
    try FileManager.default.copyItem(atPath: motion, toPath: served.root + "/PXL_9.MP.jpg")
    let summary = try await served.library.scan()
    #expect(summary.liveVideos == 1 && summary.skipped == 0 && summary.added == 3, "\(summary)")
    let motionAsset = try #require(try served.library.asset(atPath: served.root + "/PXL_9.MP.jpg"))
    #expect(motionAsset.motionVideo?.length == mp4.count && motionAsset.liveVideo == nil)
    let asset = try #require(try served.library.asset(atPath: still))
    #expect(asset.liveVideo == "IMG_0001.MOV" && asset.motionVideo == nil)
    #expect(try served.library.asset(atPath: served.root + "/IMG_0001.MOV") == nil)
    #expect(try served.library.asset(atPath: served.root + "/other.mov")?.mediaType == .video)
    #expect(try served.ids().count == 4, "gps.jpg, the Live Photo, the motion photo, other.mov")
    #expect(try served.library.motionVideoBytes(of: asset.id) == mov)
    #expect(try served.library.motionVideoBytes(of: asset.id, part: 10..<20) == Array(mov[10..<20]))

    let out = folder.file("live.mov")
    let rendered = try CLI.run(["render", "--rep", "video", still, "-o", out])
    #expect(rendered.status == 0, "\(rendered.stderr)")
    #expect(try Fixture.bytes(out) == mov)
    let asked = try CLI.run(["render", "--rep", "video", served.root + "/IMG_0001.MOV", "-o", "-"])
    #expect(asked.status == 1)
    #expect(
      asked.stderr
        == "darkroom: \(served.root)/IMG_0001.MOV: is the video of the Live Photo IMG_0001.JPG: ask for that photo's video\n"
    )

    let plainID = try #require(try served.library.asset(atPath: served.root + "/gps.jpg")?.id)
    try await served.test { client, _ in
      try await VideoTests.sendsFile(
        client, asset.id, mov, range: 100..<300, rep: "video", type: "video/quicktime")
      try await VideoTests.sendsFile(
        client, motionAsset.id, mp4, range: 0..<50, rep: "video", type: "video/mp4")
      let none = try await client.execute(
        uri: "/api/assets/\(plainID)/video", method: .get, headers: ServedLibrary.read)
      #expect(none.status == .notFound, "\(none.text)")
      #expect(none.errorKind == "not-found", "\(none.text)")
      let listed = try await client.execute(
        uri: "/api/assets/\(asset.id)", method: .get, headers: ServedLibrary.read)
      #expect(listed.object["liveVideo"] as? String == "IMG_0001.MOV", "\(listed.text)")
    }

    // Uploaded through the API, still then MOV, or MOV then still: one asset either way, the
    // MOV kept (not refused as no asset of its own, nor left a video of its own).
    // Content of their own: an upload of bytes the library has is a duplicate.
    let uploads = [
      (
        "IMG_0100.JPG", "IMG_0100.MOV", try Self.clip("a.mov", in: folder, source: "testsrc"),
        try Fixture.bytes(Fixture.sample("orientation-2.jpg"))
      ),
      (
        "IMG_0200.MOV", "IMG_0200.JPG", try Self.clip("b.mov", in: folder, source: "smptebars"),
        try Fixture.bytes(Fixture.sample("orientation-3.jpg"))
      ),
    ]
    try await served.test { client, _ in
      for (first, second, video, photo) in uploads {
        var ids: [String] = []
        for name in [first, second] {
          let body = name.hasSuffix(".MOV") ? video : photo
          let sent = try await client.execute(
            uri: "/api/uploads?name=\(name)", method: .post, headers: ServedLibrary.write,
            body: ByteBuffer(bytes: body))
          #expect(sent.status == .created, "\(name): \(sent.text)")
          ids.append(((sent.object["asset"] as? [String: Any])?["id"] as? String) ?? "")
        }
        let still = served.root + "/Uploads/" + (first.hasSuffix(".JPG") ? first : second)
        let pair = try #require(try served.library.asset(atPath: still), "\(first)")
        #expect(pair.liveVideo == (first.hasSuffix(".MOV") ? first : second), "\(first)")
        // The still's upload answers with the pair; so does the MOV's when the still came first
        // (when it came first, the MOV was a video of its own until the still arrived).
        let expected =
          first.hasSuffix(".JPG")
          ? [pair.id.rawValue, pair.id.rawValue] : [ids[0], pair.id.rawValue]
        #expect(ids == expected && ids[0] != "", "\(ids)")
        let movPath = served.root + "/Uploads/" + (first.hasSuffix(".MOV") ? first : second)
        #expect(try Fixture.bytes(movPath) == video)
        #expect(
          try served.library.asset(atPath: movPath) == nil, "\(first): not an asset of its own")
      }
    }

    // Trashed, the pair goes to the trash together (the MOV left behind would be scanned as a
    // video of its own), and comes back together.
    let movBytes = try Fixture.bytes(served.root + "/IMG_0001.MOV")
    _ = try served.library.trash([asset.id])
    #expect(!FileManager.default.fileExists(atPath: served.root + "/IMG_0001.MOV"))
    let trashed = served.root + "/.darkroom/trash/\(asset.id)/IMG_0001.MOV"
    #expect(try Fixture.bytes(trashed) == movBytes)
    _ = try await served.library.scan()
    #expect(try served.library.asset(atPath: served.root + "/IMG_0001.MOV") == nil)
    _ = try served.library.restore([asset.id])
    #expect(try Fixture.bytes(served.root + "/IMG_0001.MOV") == movBytes)
    _ = try await served.library.scan()
    #expect(try served.library.asset(atPath: still)?.liveVideo == "IMG_0001.MOV")
    #expect(try served.library.asset(atPath: served.root + "/IMG_0001.MOV") == nil)

    // The still goes: the MOV is a video of its own again; the still comes back: one asset.
    try FileManager.default.moveItem(atPath: still, toPath: folder.file("away.jpg"))
    _ = try await served.library.scan()
    #expect(try served.library.asset(atPath: served.root + "/IMG_0001.MOV")?.mediaType == .video)
    try FileManager.default.moveItem(atPath: folder.file("away.jpg"), toPath: still)
    _ = try await served.library.scan()
    #expect(try served.library.asset(atPath: served.root + "/IMG_0001.MOV") == nil)
    #expect(try served.library.asset(atPath: still)?.liveVideo == "IMG_0001.MOV")
  }
}
