import Foundation
import Testing

@testable import Darkroom

@Suite("Fast paths give the same picture", .timeLimit(.minutes(10)), .offThePool)
struct SpeedPathTests {
  /// A 1600x2400 JPEG stored with EXIF orientation 6 (the sample scene, scaled up), so that
  /// display representations shrink it on load.
  static func largeRotatedJPEG() throws -> [UInt8] {
    var options = VipsImage.ThumbnailOptions(width: 2400, height: 2400)
    options.size = 1  // up
    options.autoRotate = false
    let large = try VipsImage.thumbnail(path: Fixture.sample("orientation-6.jpg"), options)
    return try large.encode(suffix: ".jpg[Q=90]")
  }

  /// The mean absolute difference of two images' bands over a 24x24 grid of points.
  static func meanDifference(_ a: VipsImage, _ b: VipsImage) throws -> Double {
    var total = 0.0
    var count = 0
    for row in 0..<24 {
      for column in 0..<24 {
        let x = (column * 2 + 1) * a.width / 48
        let y = (row * 2 + 1) * a.height / 48
        let pa = try a.pixel(x: x, y: y)
        let pb = try b.pixel(x: x, y: y)
        for (va, vb) in zip(pa, pb) {
          total += abs(va - vb)
          count += 1
        }
      }
    }
    return total / Double(count)
  }

  @Test(
    "JPEG shrink-on-load to just above the box: same size and metadata, pixels within 3 levels",
    arguments: [Representation.fullscreen, .thumbnail, .aspectThumbnail])
  func jpegShrinkMatchesFullDecode(representation: Representation) throws {
    let bytes = try Self.largeRotatedJPEG()
    var spec = RenditionSpec(representation)
    spec.size = 200
    (spec.screenWidth, spec.screenHeight) = (900, 600)
    let renderer = Renderer()
    let metadata = try AssetMetadata.read(.data(bytes, name: "large.jpg"))
    let box = renderer.box(spec, metadata)
    let shrink = Renderer.jpegShrink(metadata, box, fill: representation == .thumbnail)
    #expect(shrink >= 2, "the test exercises the fast path")

    // What the renderer did before: libvips' thumbnail, which decodes every pixel.
    var options = VipsImage.ThumbnailOptions(width: box.width, height: box.height)
    if representation == .thumbnail {
      options.crop = spec.crop.vipsInteresting
      options.size = 0
    }
    let full = try VipsImage.thumbnail(buffer: PinnedBytes(bytes), name: "full", options)
    let fast = try renderer.render(.data(bytes, name: "large.jpg"), spec)
    let decoded = try VipsImage.open(
      buffer: PinnedBytes(fast.bytes), name: "fast", sequential: false)
    #expect((fast.width, fast.height) == (full.width, full.height))
    #expect(try Self.meanDifference(full, decoded) < 3)
    let described = try AssetMetadata.read(.data(fast.bytes, name: "fast"))
    #expect(described.orientation == .valid(.up))
    #expect(described.cameraName == metadata.cameraName)
  }

  /// Lanczos-3 as the textbook has it, in doubles: the kernel stretched by the reduction
  /// about each output pixel's centre ((i + 0.5) * scale - 0.5), normalised, edges extended;
  /// rows first, then columns, each pass rounded to 8 bits.
  static func lanczos(
    _ pixels: [UInt8], width: Int, height: Int, bands: Int, to size: (Int, Int)
  ) -> [UInt8] {
    func kernel(_ x: Double) -> Double {
      x == 0 ? 1 : abs(x) >= 3 ? 0 : 3 * sin(.pi * x) * sin(.pi * x / 3) / (.pi * .pi * x * x)
    }
    func taps(_ n: Int, _ m: Int) -> [[(Int, Double)]] {
      let scale = Double(n) / Double(m)
      return (0..<m).map { i in
        let centre = (Double(i) + 0.5) * scale - 0.5
        let span = Int((centre - 3 * scale).rounded(.down))...Int((centre + 3 * scale).rounded(.up))
        let raw = span.map { (min(max($0, 0), n - 1), kernel((Double($0) - centre) / scale)) }
        let sum = raw.reduce(0) { $0 + $1.1 }
        return raw.map { ($0.0, $0.1 / sum) }
      }
    }
    func round8(_ v: Double) -> UInt8 { UInt8(min(255, max(0, v.rounded()))) }
    let (rows, columns) = (taps(height, size.1), taps(width, size.0))
    var middle = [UInt8](repeating: 0, count: width * size.1 * bands)
    for y in 0..<size.1 {
      for i in 0..<(width * bands) {
        middle[y * width * bands + i] = round8(
          rows[y].reduce(0) { $0 + Double(pixels[$1.0 * width * bands + i]) * $1.1 })
      }
    }
    var out = [UInt8](repeating: 0, count: size.0 * size.1 * bands)
    for y in 0..<size.1 {
      for x in 0..<size.0 {
        for b in 0..<bands {
          out[(y * size.0 + x) * bands + b] = round8(
            columns[x].reduce(0) {
              $0 + Double(middle[(y * width + $1.0) * bands + b]) * $1.1
            })
        }
      }
    }
    return out
  }

  @Test(
    "Darkroom's own reduce is Lanczos-3 as the textbook has it, within a level: photos of one and three bands at reductions from 1.3 to 600, down to one pixel; a flat image stays exactly flat"
  )
  func fitIsLanczos() throws {
    let colour = try VipsImage.open(path: Fixture.sample("gps.jpg"), sequential: false)
    let grey = try VipsImage.fromPixels(
      try colour.pixels().enumerated().compactMap { $0.offset % 3 == 1 ? $0.element : nil },
      width: colour.width, height: colour.height, bands: 1)
    for image in [colour, grey] {
      let pixels = try image.pixels()
      // Down to a few pixels too, where the kernel reaches past both edges.
      for size in [(460, 307), (324, 216), (163, 108), (4, 3), (2, 2), (1, 1)] {
        let own = try #require(try image.fitted(width: size.0, height: size.1))
        #expect((own.width, own.height) == size)
        let expected = Self.lanczos(
          pixels, width: image.width, height: image.height, bands: image.bands, to: size)
        let most = zip(try own.pixels(), expected).map { abs(Int($0) - Int($1)) }.max()
        #expect(most ?? 99 <= 1, "\(image.bands) bands to \(size): \(most ?? -1)")
      }
    }
    #expect(try colour.fitted(width: 601, height: 400) == nil)  // larger: not a reduce
    let flat = try VipsImage.fromPixels(
      [UInt8](repeating: 77, count: 300 * 200 * 3), width: 300, height: 200, bands: 3)
    let small = try #require(try flat.fitted(width: 100, height: 67))
    #expect(try small.pixels().allSatisfy { $0 == 77 })
  }

  @Test(
    "a fit's thumbnail is libvips' own: the same size, turned the same way, and pixels within a level on average (libvips' vertical pass weighs in 2.6 fixed point, so single pixels differ more)",
    arguments: [true, false])
  func fitAsLibvips(turned: Bool) throws {
    var bytes = try Self.largeRotatedJPEG()  // stored 1600x2400, EXIF 6: shown 2400x1600
    if !turned {  // the same pixels, said to be upright: shown 1600x2400
      let stored = try VipsImage.open(buffer: PinnedBytes(bytes), name: "large", sequential: false)
      bytes = try stored.preparedForOutput(upright: true, stripLocation: false)
        .encode(suffix: ".jpg[Q=90]")
    }
    let image = try VipsImage.open(buffer: PinnedBytes(bytes), name: "large", sequential: true)
    #expect(image.orientation == (turned ? .right : .up))
    let options = VipsImage.ThumbnailOptions(width: 700, height: 500)
    let own = try image.fittedThumbnail(options)
    let reference = try VipsImage.open(buffer: PinnedBytes(bytes), name: "large", sequential: false)
    let libvips = try reference.thumbnail(options)
    #expect((own.width, own.height) == (libvips.width, libvips.height))
    #expect((own.width, own.height) == (turned ? (700, 467) : (333, 500)))
    // A sequential source is read once: its pixels are taken once.
    let (a, b) = (try own.pixels(), try libvips.pixels())
    let differences = zip(a, b).map { abs(Int($0) - Int($1)) }
    let mean = Double(differences.reduce(0, +)) / Double(differences.count)
    #expect(mean < 0.5, "mean \(mean)")
    // The corners stay where libvips puts them (a turn the wrong way would move them).
    let w = own.width
    for (x, y) in [(5, 5), (w - 6, 5), (5, own.height - 6), (w - 6, own.height - 6)] {
      let at = (y * w + x) * 3
      let (p, q) = (a[at..<at + 3], b[at..<at + 3])
      #expect(zip(p, q).allSatisfy { abs(Int($0) - Int($1)) <= 4 }, "\(x),\(y): \(p) against \(q)")
    }
  }

  @Test("the shrink is the largest power of two that still covers the output")
  func shrinkChoice() throws {
    var metadata = try AssetMetadata.read(path: Fixture.sample("orientation-1.jpg"))
    (metadata.width, metadata.height) = (6000, 4000)
    metadata.orientation = .valid(.right)  // shown 4000x6000
    #expect(Renderer.jpegShrink(metadata, (1080, 1920), fill: false) == 2)  // 3.7x
    #expect(Renderer.jpegShrink(metadata, (256, 256), fill: true) == 8)  // 15.6x
    #expect(Renderer.jpegShrink(metadata, (256, 256), fill: false) == 8)  // 23x
    #expect(Renderer.jpegShrink(metadata, (3000, 5000), fill: false) == 1)  // 1.2x
    #expect(Renderer.jpegShrink(metadata, (8000, 8000), fill: false) == 1)  // no upscale
  }

  /// An edit as it was rendered before geometry folded: the whole image turned upright,
  /// then the graph in order, then the same output settings as `Renderer.renderEdit`.
  static func editTurningUprightFirst(_ bytes: [UInt8], _ recipe: EditRecipe) throws -> [UInt8] {
    let upright = try VipsImage.open(buffer: PinnedBytes(bytes), name: "in", sequential: false)
      .autorotated().srgb()
    let output = try recipe.graph.apply(to: upright).preparedForOutput(
      upright: true, stripLocation: false)
    output.setBlob("xmp-data", recipe.xmp)
    return try output.encode(recipe.format, quality: 92, effort: recipe.effort, strip: false)
  }

  static let foldingGraphs = [
    ["noir", "tone exposure=0.5 contrast=0.2", "crop aspect=4:5"],
    ["crop x=0.1 y=0.2 width=0.5 height=0.3", "rotate 90"],
    [
      "rotate 270", "flip vertical", "crop unit=px x=7 y=11 width=100 height=50",
      "tone exposure=0.3",
    ],
    ["flip horizontal", "crop aspect=16:9", "rotate 180", "crop aspect=1:1", "noir"],
    ["tone saturation=0.4 warmth=0.2", "rotate 90", "flip horizontal", "crop aspect=3:2"],
    ["noir", "rotate 90", "tone saturation=0.3", "crop x=0.25 y=0 width=0.5 height=1"],
    ["tone exposure=0.2"],
    ["balance 5000", "rotate 90", "vibrance 0.5", "crop aspect=1:1", "hsl blue-hue=0.3"],
  ]

  /// Graphs whose first steps fold and whose rest reads neighbours or positions: the first
  /// part runs on the stored image, the rest on the upright result.
  static let splitGraphs = [
    ["tone exposure=0.2", "rotate 90", "definition 0.3", "grain amount=0.3"],
    ["noir", "crop aspect=1:1", "sharpen amount=1", "vignette amount=0.4"],
    [
      "balance 5000", "flip horizontal", "texture 0.4", "denoise luminance=0.3 colour=0.3",
      "perspective vertical=0.1", "tone contrast=0.2",
    ],
    ["crop angle=5", "definition 0.2"],
  ]

  @Test(
    "an edit folds crops, turns and flips into the orientation (up to a filter that reads neighbours or positions, the rest run upright): the same bytes as turning the whole image upright first",
    arguments: Array(1...8))
  func foldedGeometryIsExact(orientation: Int) throws {
    // An odd size, so that centring and turning cannot hide an off-by-one.
    let stored = try VipsImage.open(
      path: Fixture.sample("orientation-1.jpg"), sequential: false
    ).cropped(left: 13, top: 7, width: 301, height: 203).encode(suffix: ".jpg[Q=90]")
    let bytes = ExifBuilder.jpeg(
      stored,
      replacingExifWith: ExifBuilder.block([ExifBuilder.short(0x0112, UInt16(orientation))]))
    var inputs = [("o\(orientation).jpg", bytes)]
    if orientation == 1 {
      for sample in ["alpha.png", "display-p3.jpg", "gps.jpg", "heif-exif-6.heic"] {
        inputs.append((sample, try Fixture.bytes(Fixture.sample(sample))))
      }
    }
    for (name, input) in inputs {
      let metadata = try AssetMetadata.read(.data(input, name: name))
      let format = try #require(ImageFormat(sourceFormat: metadata.format))
      for specs in Self.foldingGraphs + Self.splitGraphs {
        let graph = try FilterGraph.parse(specs: specs)
        #expect(graph.foldsGeometry == Self.foldingGraphs.contains(specs))
        let recipe = EditRecipe(
          graph: graph, version: 1, format: format, quality: 92, xmp: Array("<x/>".utf8))
        let folded = try Renderer().renderEdit(
          .data(input, name: name), metadata: metadata, recipe: recipe)
        let reference = try Self.editTurningUprightFirst(input, recipe)
        if format == .heic, Self.splitGraphs.contains(specs) {
          // The same pixels and the same EXIF tags; libexif lays the tags' data out in
          // another order after the reference's autorot, which removes the orientation.
          let shown = try VipsImage.open(buffer: PinnedBytes(folded), name: name, sequential: false)
          let expected = try VipsImage.open(
            buffer: PinnedBytes(reference), name: name, sequential: false)
          #expect(try shown.pixels() == expected.pixels(), "\(name): \(specs)")
        } else {
          #expect(
            ContentHash.of(bytes: folded) == ContentHash.of(bytes: reference),
            "\(name): \(specs)")
        }
      }
    }
    // Straightening resamples: it takes the upright path.
    #expect(!(try FilterGraph.parse(specs: ["crop angle=5"]).foldsGeometry))
  }

  static func rectangle(_ p: Placement) -> [Int] { [p.left, p.top, p.width, p.height] }

  @Test("placements: the orientation and a crop land on the stored pixels they show")
  func placementArithmetic() {
    // 6000x4000 stored, orientation 6 (4000x6000 upright); the centred 4:5 crop keeps the
    // upright rows 500..<5500, which are the stored columns 500..<5500.
    var placement = Placement(storedWidth: 6000, storedHeight: 4000, orientation: .right)
    #expect((placement.uprightWidth, placement.uprightHeight) == (4000, 6000))
    placement.crop(left: 0, top: 500, width: 4000, height: 5000)
    #expect(Self.rectangle(placement) == [500, 0, 5000, 4000])
    #expect(placement.movesPixels)
    // Orientation 8 turns the stored image anticlockwise: the upright top-left 10x20 is the
    // stored top-right 20x10.
    var left = Placement(storedWidth: 600, storedHeight: 400, orientation: .left)
    left.crop(left: 0, top: 0, width: 10, height: 20)
    #expect(Self.rectangle(left) == [580, 0, 20, 10])
    // Mirrored top to bottom, then left to right: a half turn.
    var half = Placement(storedWidth: 600, storedHeight: 400, orientation: .up)
    half.flip(vertically: true)
    half.flip(vertically: false)
    #expect(!half.mirrored && half.quarterTurns == 2)
    // Mirrored top to bottom, a half turn, mirrored left to right: no move at all.
    half.turn(quarterTurns: 2)
    #expect(!half.movesPixels)
  }

  /// Every RGB triple once, 4096x4096.
  static func everyColour() throws -> VipsImage {
    let side = 4096
    let pixels = [UInt8](unsafeUninitializedCapacity: side * side * 3) { buffer, count in
      for index in 0..<(side * side) {
        buffer[3 * index] = UInt8(truncatingIfNeeded: index >> 16)
        buffer[3 * index + 1] = UInt8(truncatingIfNeeded: index >> 8)
        buffer[3 * index + 2] = UInt8(truncatingIfNeeded: index)
      }
      count = side * side * 3
    }
    return try VipsImage.fromPixels(pixels, width: side, height: side, bands: 3)
  }

  @Test("grey and colour matrices in one pass: libvips' recomb + rint + cast bytes, all colours")
  func oneMixPassIsLibvipsExactly() throws {
    let all = try Self.everyColour()
    let matrices: [(String, [Double])] = [
      ("Rec. 709 luma, noir's", [0.2126, 0.7152, 0.0722]),
      ("Rec. 601 luma", [0.299, 0.587, 0.114]),
      ("thirds, with many exact ties", [1.0 / 3, 1.0 / 3, 1.0 / 3]),
      ("sums past 255, clipped", [0.5, 0.5, 0.5]),
      ("negative weights, clipped at 0", [-0.3, 1.1, 0.4]),
      ("sepia", [0.393, 0.769, 0.189, 0.349, 0.686, 0.168, 0.272, 0.534, 0.131]),
    ]
    for (name, matrix) in matrices {
      let rows = matrix.count / 3
      #if arch(x86_64)
        #expect(all.mixesInOnePass(matrix, rows: rows), "\(name): the shim's own pass runs")
      #endif
      let own = try all.mixed(matrix, rows: rows)
      let reference = try all.mixed(matrix, rows: rows, byLibvips: true)
      #expect(own.bands == rows && reference.bands == rows)
      let ownBytes = try own.pixels()
      #expect(ownBytes.count == 4096 * 4096 * rows)
      #expect(
        ContentHash.of(bytes: ownBytes) == ContentHash.of(bytes: try reference.pixels()),
        "\(name): the same byte for every colour")
    }
    // Where the sum could leave int range, or the input is not 3 bands, libvips runs.
    #expect(!all.mixesInOnePass([1e7, 0, 0], rows: 1))
    #expect(!all.mixesInOnePass([.nan, 0, 0], rows: 1))
    let grey = try all.greyscale([0.2126, 0.7152, 0.0722])
    #expect(!grey.mixesInOnePass([1, 0, 0], rows: 1))
  }

  @Test("grey to colour in one table pass: every level three times, through the table")
  func greyToColourThroughTable() throws {
    let grey = try VipsImage.open(path: Fixture.sample("orientation-1.jpg"), sequential: false)
      .greyscale([0.2126, 0.7152, 0.0722])
    let levels = try grey.pixels()
    let table = (0..<256).map { UInt8(255 - $0) }
    let plain = try grey.greyToRGB()
    let mapped = try grey.greyToRGB(through: table)
    #expect(plain.bands == 3 && mapped.bands == 3)
    #expect(try plain.pixels() == levels.flatMap { [$0, $0, $0] })
    #expect(
      try mapped.pixels() == levels.flatMap { [table[Int($0)], table[Int($0)], table[Int($0)]] })
    #expect(Set(levels).count > 100, "the sample has many grey levels")
  }

}
