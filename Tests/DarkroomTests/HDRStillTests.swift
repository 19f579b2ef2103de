import Foundation
import Testing

@testable import Darkroom

/// HEIF/AVIF photos whose colour is coded by an `nclx` box (HDR PQ and HLG, Display P3,
/// BT.2020), which libvips 8.14 ignores: converted to sRGB by the renderer. The files are made
/// here by libavif's `avifenc` from 16-bit PNGs of known light. (Debian's `heif-enc` 1.15
/// writes no `nclx` box for HEVC, so the HLG photo is an AVIF too: the same HEIF container and
/// the same libheif path.)
@Suite("HDR and wide-gamut stills", .timeLimit(.minutes(5)), .offThePool)
struct HDRStillTests {
  /// The four quadrants' light in cd/m2 (R, G, B): diffuse white (203), a pure red of the
  /// file's primaries at diffuse white, 18% grey, and a 1000 cd/m2 highlight.
  static let light: [[Double]] = [
    [203, 203, 203], [203, 0, 0], [36.54, 36.54, 36.54], [1000, 1000, 1000],
  ]

  /// SMPTE ST 2084's inverse EOTF: cd/m2 to signal.
  static func pq(_ nits: Double) -> Double {
    let (m1, m2, c1, c2, c3) = (0.1593017578125, 78.84375, 0.8359375, 18.8515625, 18.6875)
    let y = pow(nits / 10000, m1)
    return pow((c1 + c2 * y) / (1 + c3 * y), m2)
  }

  /// BT.2100 HLG: display light (cd/m2, a 1000 cd/m2 display) to signal, through the inverse
  /// OOTF (system gamma 1.2) and the OETF.
  static func hlg(_ rgb: [Double]) -> [Double] {
    let displayed = 0.2627 * rgb[0] + 0.6780 * rgb[1] + 0.0593 * rgb[2]
    guard displayed > 0 else { return [0, 0, 0] }
    let gain = 1000 * pow(pow(displayed / 1000, 1 / 1.2), 0.2)
    let (a, b, c) = (0.17883277, 0.28466892, 0.55991073)
    return rgb.map { value in
      let e = value / gain
      return e <= 1.0 / 12 ? (3 * e).squareRoot() : a * log(12 * e - b) + c
    }
  }

  /// A 256x128 AVIF of the four quadrants, coded as `cicp` (primaries/transfer/matrix).
  static func photo(
    _ name: String, cicp: String, signal: ([Double]) -> [Double], depth: Int = 10,
    options: [String] = [], in folder: TemporaryFolder
  ) throws -> String {
    var ppm = Array("P6\n256 128\n65535\n".utf8)
    for y in 0..<128 {
      for x in 0..<256 {
        let quadrant = (y < 64 ? 0 : 2) + (x < 128 ? 0 : 1)
        for value in signal(light[quadrant]) {
          let code = UInt16(max(0, min(1, value)) * 65535 + 0.5)
          ppm += [UInt8(code >> 8), UInt8(code & 0xFF)]
        }
      }
    }
    let source = try folder.write("\(name).ppm", ppm)
    let png = folder.file("\(name).png")
    let copy = try CLI.run(["copy", source, png], executable: "/usr/bin/vips")
    #expect(copy.status == 0, "\(copy.stderr)")
    let avif = folder.file("\(name).avif")
    let encode = try CLI.run(
      ["--cicp", cicp, "-d", "\(depth)", "-s", "8"] + options + [png, avif],
      executable: "/usr/bin/avifenc")
    #expect(encode.status == 0, "\(encode.stderr)")
    return avif
  }

  /// The mean colour of each quadrant's middle.
  static func quadrants(_ path: String) throws -> [[Double]] {
    let image = try pixels(path)
    let (w, h) = (image.width, image.height)
    return try [(w / 4, h / 4), (3 * w / 4, h / 4), (w / 4, 3 * h / 4), (3 * w / 4, 3 * h / 4)].map
    {
      try VideoTests.patch(image, $0.0 - 4, $0.1 - 4)
    }
  }

  /// Diffuse white near white, the primaries' red on sRGB's clipped red (not a dull one), 18%
  /// grey where sRGB puts it (118), the highlight white.
  static func rightlyShown(_ colours: [[Double]]) -> Bool {
    let (white, red, grey, highlight) = (colours[0], colours[1], colours[2], colours[3])
    return white.allSatisfy { $0 >= 232 } && red[0] >= 235 && red[1] <= 20 && red[2] <= 20
      && grey.allSatisfy { abs($0 - 118) <= 5 } && highlight.allSatisfy { $0 >= 250 }
  }

  @Test(
    "a PQ AVIF in Display P3 and an HLG one in BT.2020: diffuse white near white, red on sRGB's red, grey and highlight where they belong; libvips alone shows neither so"
  )
  func pqAndHLG() throws {
    let folder = try Fixture.temporaryFolder()
    let pq = try Self.photo("pq", cicp: "12/16/1", signal: { $0.map(Self.pq) }, in: folder)
    let hlg = try Self.photo("hlg", cicp: "9/18/9", signal: Self.hlg, in: folder)
    for (path, described) in [(pq, "Display P3, PQ, 10-bit"), (hlg, "BT.2020, HLG, 10-bit")] {
      let info = try CLI.run(["info", path])
      #expect(info.stdout.contains("Coded colour  \(described)\n"), "\(info.stdout)")
      let out = path + ".png"
      let run = try CLI.run(["render", "--no-cache", "--rep", "fullscreen", path, "-o", out])
      #expect(run.status == 0, "\(run.stderr)")
      let colours = try Self.quadrants(out)
      #expect(Self.rightlyShown(colours), "\(path): \(colours)")
      // libvips' own rendering, which ignores the nclx box, is not.
      let plain = path + ".vips.png"
      let vips = try CLI.run(["copy", path, plain], executable: "/usr/bin/vips")
      #expect(vips.status == 0, "\(vips.stderr)")
      let bytes = try CLI.run(
        ["colourspace", plain, plain + ".png", "srgb"], executable: "/usr/bin/vips")
      #expect(bytes.status == 0)
      #expect(!Self.rightlyShown(try Self.quadrants(plain + ".png")))
    }
    let json = try CLI.run(["info", "--json", pq])
    let objects = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]]
    let object = try #require(objects?.first)
    let colour = try #require(object["codedColour"] as? [String: Any])
    #expect(colour["primaries"] as? String == "Display P3")
    #expect(colour["transfer"] as? String == "PQ")
    #expect(colour["bitDepth"] as? Int == 10)
    #expect(colour["cicp"] as? [Int] == [12, 16, 1])
  }

  /// The quadrants from darkest to brightest (indices into ``quadrants``): where the picture's
  /// parts are, whatever its colours.
  static func order(_ colours: [[Double]]) -> [Int] {
    let luma = colours.map { 0.2126 * $0[0] + 0.7152 * $0[1] + 0.0722 * $0[2] }
    return luma.indices.sorted { luma[$0] < luma[$1] }
  }

  @Test(
    "an HDR AVIF turned (irot) and mirrored (imir) is shown as libheif turns it, converted; a 10-bit mirrored one, which libheif 1.15 refuses, too"
  )
  func transforms() throws {
    let folder = try Fixture.temporaryFolder()
    let pq: ([Double]) -> [Double] = { $0.map(Self.pq) }
    let cases: [(String, [String])] = [
      ("plain", []), ("irot1", ["--irot", "1"]), ("irot2", ["--irot", "2"]),
      ("irot3", ["--irot", "3"]), ("imir0", ["--imir", "0"]), ("imir1", ["--imir", "1"]),
      ("irot1-imir0", ["--irot", "1", "--imir", "0"]),
    ]
    for (name, options) in cases {
      // 8 bits: libheif 1.15 mirrors no deeper image, and it is the reference here.
      let avif = try Self.photo(
        name, cicp: "12/16/1", signal: pq, depth: 8, options: options, in: folder)
      let out = avif + ".png"
      let run = try CLI.run(["render", "--no-cache", "--rep", "fullscreen", avif, "-o", out])
      #expect(run.status == 0, "\(name): \(run.stderr)")
      // libvips (libheif) turns it; it shows the PQ signal as sRGB, so only places compare.
      let reference = avif + ".vips.png"
      let vips = try CLI.run(["copy", avif, reference], executable: "/usr/bin/vips")
      #expect(vips.status == 0, "\(name): \(vips.stderr)")
      let (shown, expected) = (try pixels(out), try pixels(reference))
      #expect(
        [shown.width, shown.height] == [expected.width, expected.height]
          && [shown.width, shown.height] != [0, 0], "\(name)")
      let colours = try Self.quadrants(out)
      #expect(Self.order(colours) == Self.order(try Self.quadrants(reference)), "\(name)")
      // Converted: the brightest quadrants are the white and the highlight, both near white.
      #expect(Self.order(colours).suffix(2).allSatisfy { colours[$0].allSatisfy { $0 >= 225 } })
      if name == "imir1" {
        // 10 bits, the same mirror: libheif refuses it; Darkroom shows it the same way.
        let deep = try Self.photo(
          "imir1-10", cicp: "12/16/1", signal: pq, options: options, in: folder)
        let refused = try CLI.run(["copy", deep, deep + ".vips.png"], executable: "/usr/bin/vips")
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("Can currently only mirror images with 8 bits"))
        let run = try CLI.run(["render", "--no-cache", "--rep", "fullscreen", deep, "-o", out])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(Self.order(try Self.quadrants(out)) == Self.order(colours))
      }
    }
  }

  @Test(
    "an HDR AVIF whose AV1 data is damaged: one line naming it, exit 1, nothing written, the file unchanged"
  )
  func damagedAV1() throws {
    let folder = try Fixture.temporaryFolder()
    let avif = try Self.photo("pq", cicp: "12/16/1", signal: { $0.map(Self.pq) }, in: folder)
    var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: avif)))
    // The picture's data after its first bytes (the sequence header) turned to 0xFF.
    let mdat = try #require(
      bytes.indices.dropLast(4).first { bytes[$0..<$0 + 4].elementsEqual("mdat".utf8) })
    for index in mdat + 16..<bytes.count { bytes[index] = 0xFF }
    try Data(bytes).write(to: URL(fileURLWithPath: avif))
    let beforeStat = try FileStat(avif)
    let out = folder.file("out.jpg")
    let run = try CLI.run(["render", "--no-cache", "--rep", "fullscreen", avif, "-o", out])
    #expect(run.status == 1)
    #expect(
      run.stderr
        == "darkroom: \(avif): damaged image: its AV1 data cannot be decoded (Invalid data found when processing input)\n"
    )
    #expect(!FileManager.default.fileExists(atPath: out))
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == [
        "pq.avif", "pq.png", "pq.ppm",
      ])
    #expect([UInt8](try Data(contentsOf: URL(fileURLWithPath: avif))) == bytes)
    #expect(try FileStat(avif) == beforeStat)
  }

  @Test("the engine and the API give an HDR photo's thumbnail converted, as the command line does")
  func doors() async throws {
    let served = try ServedLibrary(samples: ["gps.jpg"])
    let folder = try Fixture.temporaryFolder()
    let pq = try Self.photo("pq", cicp: "12/16/1", signal: { $0.map(Self.pq) }, in: folder)
    try FileManager.default.copyItem(atPath: pq, toPath: served.root + "/pq.avif")
    _ = try await served.library.scan()
    let id = try #require(try served.library.asset(atPath: served.root + "/pq.avif")?.id)
    var spec = RenditionSpec(.aspectThumbnail)
    spec.size = 256
    spec.format = .png
    let engine = try served.library.render(id, spec)
    #expect(Self.rightlyShown(try Self.quadrants(folder.write("engine.png", engine.bytes))))
    try await served.test { client, _ in
      let response = try await client.execute(
        uri: "/api/assets/\(id)/aspect-thumbnail?size=256&format=png", method: .get,
        headers: ServedLibrary.read)
      #expect(response.status == .ok)
      #expect(response.bytes == engine.bytes)
    }
  }

  @Test(
    "an Ultra HDR JPEG (an SDR base, XMP hdrgm, a gain map JPEG after it) renders its SDR base exactly as the base alone; info reads it whole"
  )
  func gainMapJPEG() throws {
    let folder = try TemporaryFolder()
    // The base: the sample with the XMP an Ultra HDR (ISO 21496-1) primary carries.
    let base = folder.file("base.jpg")
    try FileManager.default.copyItem(atPath: Fixture.sample("gps.jpg"), toPath: base)
    let xmp = try folder.write(
      "hdrgm.xmp",
      Array(
        """
        <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">\
        <rdf:Description rdf:about="" xmlns:hdrgm="http://ns.adobe.com/hdr-gain-map/1.0/" \
        hdrgm:Version="1.0"/></rdf:RDF></x:xmpmeta>
        """.utf8))
    let tagged = try CLI.run(
      ["-q", "-overwrite_original", "-xmp<=\(xmp)", base], executable: "/usr/bin/exiftool")
    #expect(tagged.status == 0, "\(tagged.stderr)")
    // The gain map: a small grey JPEG, appended after the base's end, as Ultra HDR stores it.
    let map = folder.file("map.jpg")
    let made = try CLI.run(
      ["render", "--rep", "thumbnail", "--size", "64", "--no-cache", base, "-o", map])
    #expect(made.status == 0, "\(made.stderr)")
    let ultra = try folder.write("ultra.jpg", Fixture.bytes(base) + Fixture.bytes(map))
    for (rep, extra) in [("fullscreen", [String]()), ("thumbnail", ["--size", "128"])] {
      let one = folder.file("\(rep)-ultra.png")
      let two = folder.file("\(rep)-base.png")
      for (input, output) in [(ultra, one), (base, two)] {
        let run = try CLI.run(
          ["render", "--rep", rep, "--no-cache", "--strip", input, "-o", output] + extra)
        #expect(run.status == 0, "\(run.stderr)")
      }
      #expect(try Fixture.bytes(one) == Fixture.bytes(two), "\(rep)")
    }
    let info = try CLI.run(["info", ultra])
    #expect(info.status == 0 && !info.stdout.contains("Damage"), "\(info.stdout)")
  }
}
