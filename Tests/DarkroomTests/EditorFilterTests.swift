import Foundation
import Testing

@testable import Darkroom

/// The editor's filters (issue 54), each held to the property its meaning fixes, on images
/// the tests make: ramps, patches, edges, noise and a scene.
@Suite("Editor filters", .timeLimit(.minutes(10)), .offThePool)
struct EditorFilterTests {
  @Test(
    "a filter's pass computed into memory keeps the render's time limit (where a foreign edit's rendition, a RAW's edit or a preview decode the photo): spent, it stops with the limit's error; not spent, the same pixels"
  )
  func passKeepsTimeLimit() throws {
    let path = Fixture.sample("orientation-1.jpg")
    let graph = try FilterGraph.parse(spec: "sharpen amount=0.8")
    // Spent before the pass (no timing: the render began a minute ago).
    let spent = ContinuousClock.now - .seconds(60)
    #expect(
      throws: DarkroomError.timedOut(path, after: .seconds(30)),
      performing: {
        try Watchdog.keeping(.seconds(30), from: spent) { () throws(DarkroomError) in
          _ = try graph.apply(to: VipsImage.open(path: path, sequential: false)).encode(
            suffix: ".png")
        }
      })
    let kept = try Watchdog.keeping(.seconds(3600), from: .now) { () throws(DarkroomError) in
      try graph.apply(to: VipsImage.open(path: path, sequential: false)).pixels()
    }
    let free = try graph.apply(to: VipsImage.open(path: path, sequential: false)).pixels()
    #expect(kept == free)
  }

  /// An 8-bit RGB image whose pixel at (x, y) is `colour(x, y)`.
  static func image(_ width: Int, _ height: Int, _ colour: (Int, Int) -> [UInt8]) throws
    -> VipsImage
  {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(width * height * 3)
    for y in 0..<height { for x in 0..<width { bytes += colour(x, y) } }
    return try VipsImage.fromPixels(bytes, width: width, height: height, bands: 3)
  }

  /// `spec` applied to `image`: its pixels, 3 bytes each.
  static func filtered(_ spec: String, _ image: VipsImage) throws -> [UInt8] {
    try FilterGraph.parse(spec: spec).apply(to: image).pixels()
  }

  static func linear(_ level: UInt8) -> Double { ColourMath.decode(Double(level) / 255) }

  /// Mean and variance of band `band` over a rectangle of a `width`-wide RGB image.
  static func stats(
    _ p: [UInt8], width: Int, x: Range<Int>, y: Range<Int>, band: Int = 1
  ) -> (mean: Double, variance: Double) {
    var values: [Double] = []
    for row in y { for column in x { values.append(Double(p[(row * width + column) * 3 + band])) } }
    let mean = values.reduce(0, +) / Double(values.count)
    let variance = values.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(values.count)
    return (mean, variance)
  }

  /// A deterministic pseudo-random sequence (tests must not depend on chance).
  struct Noise {
    var state: UInt64
    mutating func next() -> Double {
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return Double(state >> 11) / Double(1 << 53)
    }
  }

  @Test("exposure +1 doubles linear light within 2%")
  func exposureDoubles() throws {
    // From level 50 up, a level's rounding is under 1% of its light.
    let ramp = try Self.image(64, 1) { x, _ in [UInt8(50 + x), UInt8(50 + x), UInt8(50 + x)] }
    let out = try Self.filtered("tone exposure=1", ramp)
    for x in 0..<64 {
      let ratio = Self.linear(out[x * 3]) / Self.linear(UInt8(50 + x))
      #expect(abs(ratio - 2) < 0.04, "level \(50 + x): \(ratio)")
    }
  }

  @Test("white balance brings a grey card under a warm light to neutral within 2 of a* and b*")
  func balanceNeutralizes() throws {
    // A grey card of 18% lit by a tungsten-like light: linear gains, then encoded.
    let light = [1.28, 1.0, 0.62]
    let card = light.map { UInt8((ColourMath.encode(0.18 * $0) * 255).rounded()) }
    let before = ColourMath.lab(srgb: card.map(Double.init))
    #expect(abs(before[1]) + abs(before[2]) > 15, "the cast is strong: \(before)")
    let chosen = BalanceFilter.neutralizing(linear: light)
    #expect(chosen.kelvin < 5000, "a warm light reads as a low temperature: \(chosen)")
    let patch = try Self.image(8, 8) { _, _ in card }
    let out = try Self.filtered(
      "balance temperature=\(chosen.kelvin) tint=\(chosen.tint)", patch)
    let after = ColourMath.lab(srgb: Array(out[0..<3]).map(Double.init))
    #expect(abs(after[1]) < 2 && abs(after[2]) < 2, "a*, b* after: \(after)")
    // At its defaults it changes nothing; a lower temperature cools a neutral grey.
    let grey = try Self.image(8, 8) { _, _ in [128, 128, 128] }
    #expect(try Self.filtered("balance", grey) == grey.pixels())
    let cooled = try Self.filtered("balance temperature=3200", grey)
    #expect(ColourMath.lab(srgb: Array(cooled[0..<3]).map(Double.init))[2] < -10)
  }

  @Test("vibrance raises low-saturation colours more than high ones and leaves grey alone")
  func vibranceFavoursMuted() throws {
    let muted: [UInt8] = [140, 125, 110]
    let vivid: [UInt8] = [230, 40, 30]
    let patches = try Self.image(3, 1) { x, _ in x == 0 ? muted : x == 1 ? vivid : [120, 120, 120] }
    let out = try Self.filtered("vibrance 0.6", patches)
    func chroma(_ c: [UInt8]) -> Double {
      let lab = ColourMath.oklab(linear: c.map { Self.linear($0) })
      return (lab[1] * lab[1] + lab[2] * lab[2]).squareRoot()
    }
    let mutedGain = chroma(Array(out[0..<3])) / chroma(muted)
    let vividGain = chroma(Array(out[3..<6])) / chroma(vivid)
    #expect(mutedGain > 1.3, "muted: \(mutedGain)")
    #expect(vividGain < 1.05, "vivid: \(vividGain)")
    #expect(out[6..<9].allSatisfy { abs(Int($0) - 120) <= 1 })
  }

  @Test("sharpen raises the edge contrast of a blurred step")
  func sharpenRaisesEdges() throws {
    // A step from 80 to 170 blurred over about 3 pixels.
    let step = try Self.image(64, 4) { x, _ in
      let t = 1 / (1 + exp(-Double(x - 32) / 0.7))
      let v = UInt8((80 + 90 * t).rounded())
      return [v, v, v]
    }
    let before = try step.pixels()
    let out = try Self.filtered("sharpen amount=2.5 radius=1.5 detail=1", step)
    func contrast(_ p: [UInt8]) -> Int { Int(p[34 * 3]) - Int(p[30 * 3]) }
    #expect(contrast(out) > contrast(before) + 8, "\(contrast(before)) -> \(contrast(out))")
    // An unsharp mask's mark: the sides of the edge pushed past the levels of the step.
    let row = (0..<64).map { out[$0 * 3] }
    #expect(row[33..<42].max()! > 170 + 4, "\(row[22..<42])")
    #expect(row[22..<31].min()! < 80 - 4, "\(row[22..<42])")
    // Far from the edge, flat stays flat.
    #expect(out[5 * 3] == before[5 * 3] && out[60 * 3] == before[60 * 3])
  }

  @Test("denoise at least halves the variance of a flat noisy patch")
  func denoiseHalvesVariance() throws {
    var noise = Noise(state: 7)
    let patch = try Self.image(64, 64) { _, _ in
      (0..<3).map { _ in UInt8(max(0, min(255, 128 + (noise.next() - 0.5) * 40))) }
    }
    let before = Self.stats(try patch.pixels(), width: 64, x: 8..<56, y: 8..<56)
    let out = try Self.filtered("denoise luminance=1 colour=1", patch)
    let after = Self.stats(out, width: 64, x: 8..<56, y: 8..<56)
    #expect(after.variance <= before.variance / 2, "\(before.variance) -> \(after.variance)")
    #expect(abs(after.mean - before.mean) < 2)
  }

  @Test("a vignette darkens the corners and leaves the centre within 1%")
  func vignetteCorners() throws {
    let grey = try Self.image(120, 80) { _, _ in [150, 150, 150] }
    let out = try Self.filtered("vignette amount=-0.8", grey)
    let centre = Self.stats(out, width: 120, x: 50..<70, y: 30..<50)
    let corner = Self.stats(out, width: 120, x: 0..<6, y: 0..<6)
    #expect(abs(centre.mean - 150) <= 1.5, "centre \(centre.mean)")
    #expect(corner.mean < 150 * 0.6, "corner \(corner.mean)")
  }

  @Test(
    "warp to the middle quarter's corners is that crop, byte for byte (each result pixel lands on a source pixel's centre); corners past the edge show black; a mirror-image quad mirrors; three corners in a line are refused"
  )
  func warpIsProjective() throws {
    let photo = try Self.image(200, 120) { x, y in [UInt8(x), UInt8(y * 2), UInt8((x + y) % 256)] }
    let quarter =
      "warp x1=0.25 y1=0.25 x2=0.75 y2=0.25 x3=0.75 y3=0.75 x4=0.25 y4=0.75 width=0.5 height=0.5"
    #expect(
      try Self.filtered(quarter, photo)
        == Self.filtered("crop x=0.25 y=0.25 width=0.5 height=0.5", photo))
    // The result's left quarter lies left of the photo: black there, the photo beyond.
    let wider = try FilterGraph.parse(
      spec: "warp x1=-0.5 y1=0 x2=1 y2=0 x3=1 y3=1 x4=-0.5 y4=1 width=1.5 height=1"
    ).apply(to: photo)
    #expect((wider.width, wider.height) == (300, 120))
    #expect(try wider.pixel(x: 10, y: 60) == [0, 0, 0])
    // Result x 150.5 (a pixel centre) is source x 50.5, the pixel (50, 60).
    #expect(try wider.pixel(x: 150, y: 60) == [50, 120, 110])
    // Corners swapped left for right: the photo mirrored, as `flip` mirrors it.
    #expect(
      try Self.filtered("warp x1=1 y1=0 x2=0 y2=0 x3=0 y3=1 x4=1 y4=1", photo)
        == Self.filtered("flip direction=horizontal", photo))
    #expect(throws: DarkroomError.self) {
      try FilterGraph.parse(spec: "warp x1=0 y1=0 x2=0.5 y2=0.5 x3=1 y3=1 x4=0 y4=1")
    }
    // At most four times the photo's pixels.
    #expect(
      throws: DarkroomError(
        .invalidArgument,
        "warp's result may have at most 4 times the photo's pixels (width x height 6)")
    ) { try FilterGraph.parse(spec: "warp width=3 height=2") }
  }

  @Test("perspective makes lines converging upwards parallel within 0.5 degrees")
  func perspectiveStraightens() throws {
    // Two dark lines that a camera tilted up would see: they meet where the sides of the
    // trapezoid `vertical=0.8` names would (its top a fifth of the width in on each side).
    let (w, h) = (200, 300)
    let inset = 0.8 * Double(w) / 4
    func lineX(_ bottom: Double, _ y: Double) -> Double {
      let top = inset + bottom * (Double(w) - 2 * inset) / Double(w)
      return top + (bottom - top) * y / Double(h)
    }
    let lines = try Self.image(w, h) { x, y in
      let near = [40.0, 160.0].contains { abs(Double(x) + 0.5 - lineX($0, Double(y) + 0.5)) < 1.5 }
      return near ? [0, 0, 0] : [255, 255, 255]
    }
    func angles(_ p: [UInt8]) -> [Double] {
      // Each line's centre of darkness in a band near the top and near the bottom.
      func centre(_ rows: Range<Int>, _ columns: Range<Int>) -> (x: Double, y: Double) {
        var (sum, sx, sy) = (0.0, 0.0, 0.0)
        for y in rows {
          for x in columns {
            let dark = 255 - Double(p[(y * w + x) * 3])
            sum += dark
            sx += dark * (Double(x) + 0.5)
            sy += dark * (Double(y) + 0.5)
          }
        }
        return (sx / sum, sy / sum)
      }
      return [0..<100, 100..<200].map { columns in
        let top = centre(20..<40, columns)
        let bottom = centre(260..<280, columns)
        return atan2(top.x - bottom.x, bottom.y - top.y) * 180 / .pi
      }
    }
    #expect(angles(try lines.pixels()).allSatisfy { abs($0) > 3 }, "they converge before")
    let straight = angles(try Self.filtered("perspective vertical=0.8", lines))
    #expect(straight.allSatisfy { abs($0) < 0.5 }, "angles after: \(straight)")
  }

  @Test("curve passes through its own points exactly, per channel after rgb")
  func curveThroughPoints() throws {
    let points: [(Double, Double)] = [(0, 0.12), (0.25, 0.18), (0.5, 0.62), (0.75, 0.8), (1, 0.95)]
    let spec = points.map { "\($0.0):\($0.1)" }.joined(separator: ",")
    let ramp = try Self.image(256, 1) { x, _ in [UInt8(x), UInt8(x), UInt8(x)] }
    let out = try Self.filtered("curve rgb=\(spec)", ramp)
    for (x, y) in points {
      let level = Int((x * 255).rounded())
      guard Double(level) / 255 == x else { continue }  // 0.25 is not a level: skipped
      #expect(Int(out[level * 3]) == Int((y * 255).rounded()), "x \(x)")
    }
    // Levels that are points: 0, 51/255 = 0.2, 255.
    let exact = try Self.filtered("curve rgb=0:0.2,0.2:0.4,1:0.8 blue=0:1,1:0", ramp)
    #expect(Array(exact[0..<3]) == [51, 51, 204])
    #expect(Array(exact[51 * 3..<51 * 3 + 3]) == [102, 102, 153])
    #expect(Array(exact[255 * 3..<255 * 3 + 3]) == [204, 204, 51])
    // Monotone between points: never falls where the points rise.
    let rising = try Self.filtered("curve rgb=0:0,0.3:0.6,0.35:0.62,1:1", ramp)
    for x in 1..<256 { #expect(rising[x * 3] >= rising[(x - 1) * 3]) }
  }

  @Test("hsl changes one colour range and leaves the others")
  func hslRanges() throws {
    let blue: [UInt8] = [40, 70, 220]
    let red: [UInt8] = [210, 40, 40]
    let patches = try Self.image(2, 1) { x, _ in x == 0 ? blue : red }
    let out = try Self.filtered("hsl blue-saturation=-1", patches)
    let lab = ColourMath.lab(srgb: Array(out[0..<3]).map(Double.init))
    #expect(abs(lab[1]) < 4 && abs(lab[2]) < 4, "blue made grey: \(lab)")
    #expect(zip(out[3..<6], red).allSatisfy { abs(Int($0) - Int($1)) <= 1 }, "red kept")
    let turned = try Self.filtered("hsl red-hue=1", patches)
    #expect(turned[4] > red[1] + 15, "red turned towards orange: \(Array(turned[3..<6]))")
    #expect(zip(turned[0..<3], blue).allSatisfy { abs(Int($0) - Int($1)) <= 1 }, "blue kept")
  }

  @Test("light: the white and black points and brilliance move the tones they name")
  func lightPoints() throws {
    let ramp = try Self.image(256, 1) { x, _ in [UInt8(x), UInt8(x), UInt8(x)] }
    let whites = try Self.filtered("light whites=1", ramp)
    #expect(whites[128 * 3] == 255 && whites[64 * 3] == 128 && whites[0] == 0)
    let blacks = try Self.filtered("light blacks=-1", ramp)
    #expect(blacks[127 * 3] == 0 && blacks[255 * 3] == 255 && blacks[191 * 3] == 127)
    let brilliance = try Self.filtered("light brilliance=1", ramp)
    #expect(brilliance[85 * 3] > 85 + 15, "shadows lifted: \(brilliance[85 * 3])")
    #expect(brilliance[170 * 3] < 170 - 5, "highlights held: \(brilliance[170 * 3])")
    #expect(brilliance[0] == 0 && brilliance[255 * 3] == 255)
  }

  @Test("definition and texture raise local contrast (+) and lower it (-)")
  func localContrast() throws {
    // Soft stripes: fine (period 8) over coarse (period 400) structure.
    let (w, h) = (800, 40)
    let stripes = try Self.image(w, h) { x, _ in
      let v = 128 + 20 * sin(Double(x) * 2 * .pi / 8) + 30 * sin(Double(x) * 2 * .pi / 400)
      let level = UInt8(v.rounded())
      return [level, level, level]
    }
    let before = Self.stats(try stripes.pixels(), width: w, x: 100..<700, y: 10..<30)
    for spec in ["texture 1", "definition 1"] {
      let more = Self.stats(try Self.filtered(spec, stripes), width: w, x: 100..<700, y: 10..<30)
      #expect(
        more.variance > before.variance * 1.1, "\(spec): \(before.variance) -> \(more.variance)")
    }
    let less = Self.stats(
      try Self.filtered("texture -1", stripes), width: w, x: 100..<700, y: 10..<30)
    #expect(less.variance < before.variance * 0.95)
  }

  @Test("grain is the same on every render, and shows on flat grey")
  func grainIsDeterministic() throws {
    let grey = try Self.image(96, 96) { _, _ in [128, 128, 128] }
    let first = try Self.filtered("grain amount=0.5", grey)
    #expect(try Self.filtered("grain amount=0.5", grey) == first)
    #expect(Self.stats(first, width: 96, x: 0..<96, y: 0..<96).variance > 4)
    // Computed in a larger image, the same place draws the same grain.
    let larger = try Self.image(200, 96) { _, _ in [128, 128, 128] }
    let wide = try Self.filtered("grain amount=0.5", larger)
    #expect(
      (0..<96).allSatisfy { y in
        wide[(y * 200) * 3..<(y * 200 + 96) * 3].elementsEqual(
          first[(y * 96) * 3..<(y * 96 + 96) * 3])
      })
  }
}
