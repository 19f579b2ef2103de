import CInflate
import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// darktable's detail and effect modules, read by their params' layout in darktable 4.2
/// (`src/iop/*.c`, each version's struct as `DT_MODULE_INTROSPECTION` declares it), as
/// Darkroom's filters. Each answers the nodes and whether they draw what darktable draws
/// (`exact`: rendered) or only its nearest (approximated); nil for params it cannot read.
extension ForeignEdit {
  /// A darktable module as Darkroom's nodes: empty when the module changes nothing.
  typealias DarktableModule = (nodes: [FilterNode], exact: Bool)

  /// darktable's `monochrome` (v2: the filter's centre `a`, `b` in Lab, its `size`, and
  /// `highlights`; v1 without `highlights`): grey at the pixel's own lightness, each colour
  /// kept as bright as the filter lets it through (a neutral filter, the default, lets every
  /// colour through nearly alike; a red one darkens the colours away from red). Drawn as
  /// `tone saturation=-1`, grey at the Rec. 709 luma of the encoded values, which is darker
  /// than darktable's grey in saturated colours, and has no colour filter: approximated.
  static func darktableMonochrome(_ params: [UInt32]) -> DarktableModule? {
    guard params.count == 3 || params.count == 4 else { return nil }
    let fields = params.map { Double(Float(bitPattern: $0)) }
    guard fields.allSatisfy(\.isFinite), fields[2] > 0,
      let grey = try? FilterNode("tone", ["saturation": .number(-1)])
    else { return nil }
    return ([grey], false)
  }

  /// darktable's `sharpen` (v1: `radius`, `amount`, `threshold`): an unsharp mask of the
  /// luminance, a Gaussian of standard deviation `radius` pixels, each difference made
  /// `threshold` smaller (in L units, 0-100; smaller ones dropped). Darkroom's `sharpen` is
  /// the same mask with the same radius and amount, but it fades differences below its
  /// threshold out instead of cutting every one: a threshold 3.5 times darktable's
  /// (`detail` 1 - 0.875 threshold) changes a photo as much (measured against darktable-cli
  /// 4.2 at thresholds 0.2, 0.5 and 1: Scripts/darktable-compare.py). Approximated (on a RAW
  /// too, whose development is LibRaw's).
  static func darktableSharpen(_ params: [UInt32]) -> DarktableModule? {
    guard params.count == 3 else { return nil }
    let (radius, amount, threshold) = (
      Double(Float(bitPattern: params[0])), Double(Float(bitPattern: params[1])),
      Double(Float(bitPattern: params[2]))
    )
    guard radius.isFinite, amount.isFinite, threshold.isFinite, radius >= 0, amount >= 0,
      threshold >= 0
    else { return nil }
    if radius == 0 || amount == 0 { return ([], true) }
    let detail = max(0, 1 - 0.875 * threshold)
    guard
      let node = try? FilterNode(
        "sharpen",
        [
          "amount": .number(sixPlaces(min(amount, 3))),
          "radius": .number(sixPlaces(min(max(radius, 0.3), 5))),
          "detail": .number(sixPlaces(detail)),
        ])
    else { return nil }
    return ([node], false)
  }

  /// darktable's `vignette` (v4: `scale`, `falloff_scale`, `brightness`, `saturation`, the
  /// centre, `autoratio`, `whratio`, `shape`, `dithering`, `unbound`; v3 without `unbound`,
  /// v2 without `dithering`), on an image `width` x `height` where it runs (after the crop).
  /// Its ring starts `scale` percent of half the longer side from the centre (of half each
  /// side with `autoratio`) and reaches full strength `falloff_scale` percent further; inside
  /// the ring nothing changes, outside the light is multiplied by 1 + `brightness` in linear
  /// light. That is Darkroom's `vignette`, its midpoint and feather measured from the centre
  /// to the corners instead (a circle: `roundness` 1; the frame's shape: -1), when darktable
  /// smooths its ramp (with `dithering`, and always before v3). A straight ramp (dithering
  /// off), a `saturation` (a vignette of colour too), a centre off the middle, another
  /// width-to-height ratio or shape, and a brightening (added light) are drawn as the nearest
  /// smooth darkening: approximated.
  static func darktableVignette(_ params: [UInt32], width: Double, height: Double)
    -> DarktableModule?
  {
    guard (9...11).contains(params.count), width > 0, height > 0 else { return nil }
    let float = { (index: Int) in Double(Float(bitPattern: params[index])) }
    let (scale, falloff, brightness, saturation) = (float(0), float(1), float(2), float(3))
    let (centreX, centreY, autoratio) = (float(4), float(5), params[6] != 0)
    let (ratio, shape) = (float(7), float(8))
    guard
      [scale, falloff, brightness, saturation, centreX, centreY, ratio, shape].allSatisfy(
        \.isFinite), scale >= 0, falloff >= 0
    else { return nil }
    if brightness == 0 { return saturation == 0 ? ([], true) : nil }
    // darktable's distance 1, in Darkroom's (1 at the corners).
    let diagonal = (width * width + height * height).squareRoot()
    let factor = autoratio ? 1 / 2.0.squareRoot() : max(width, height) / diagonal
    let midpoint = scale / 100 * factor
    if midpoint >= 1 { return ([], true) }  // the ring starts past the corners
    let ramp = max(falloff, 100 / min(width, height)) / 100 * factor
    let feather = ramp / (1 - midpoint)
    guard
      let node = try? FilterNode(
        "vignette",
        [
          "amount": .number(sixPlaces(max(-1, min(1, brightness)))),
          "midpoint": .number(sixPlaces(midpoint)),
          "feather": .number(sixPlaces(min(1, feather))),
          "roundness": .number(autoratio ? -1 : 1),
        ])
    else { return nil }
    let smooth = params.count < 10 || params[9] != 0
    let plain =
      smooth && saturation == 0 && centreX == 0 && centreY == 0 && (autoratio || ratio == 1)
      && shape == 1 && brightness < 0 && feather <= 1
    return ([node], plain)
  }

  /// darktable's `bilat`, local contrast (v3: `mode`, two sigmas, `detail`, `midtone`; v2
  /// without `midtone`; v1 without `mode`): `detail` is how much local contrast is added
  /// (0.25, shown as 125%, is its default). Its local Laplacian pyramid raises contrast at
  /// every scale; Darkroom's `definition` raises it at one, about as much: approximated.
  static func darktableLocalContrast(_ params: [UInt32]) -> DarktableModule? {
    let detail: Double
    switch params.count {
    case 4, 5: detail = Double(Float(bitPattern: params[3]))
    case 3: detail = Double(Float(bitPattern: params[2]))
    default: return nil
    }
    guard detail.isFinite, (-1...4).contains(detail) else { return nil }
    if detail == 0 { return ([], true) }
    let amount = max(-1, min(1, detail))
    guard let node = try? FilterNode("definition", ["amount": .number(sixPlaces(amount))]) else {
      return nil
    }
    return ([node], false)
  }
}

extension ForeignEdit {
  /// darktable's `params` as little-endian 32-bit words: hex digits, or a large struct's
  /// `gz` form (`gz`, two digits of a size hint, then base64 of a zlib stream; darktable
  /// compresses params over 100 bytes). Empty for anything else.
  static func darktableParams(_ text: String) -> [UInt32] {
    guard text.hasPrefix("gz") else { return littleEndianWords(text) }
    guard let packed = Data(base64Encoded: String(text.dropFirst(4))), packed.count <= 65536 else {
      return []
    }
    var bytes = [UInt8](repeating: 0, count: 4096)
    var made = 0
    let status = packed.withUnsafeBytes { input in
      bytes.withUnsafeMutableBufferPointer { output in
        dr_inflate(
          input.bindMemory(to: UInt8.self).baseAddress, input.count, output.baseAddress,
          output.count, &made)
      }
    }
    guard status == 0, made % 4 == 0 else { return [] }
    return stride(from: 0, to: made, by: 4).map { start in
      (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[start + $1]) << (8 * UInt32($1)) }
    }
  }

  /// The first `count` nodes (x, y) of curve `index` in darktable's `[3][20]` node arrays
  /// (words 0-119), as encoded sRGB values through `encoding`; nil for a count outside
  /// 2-16 (Darkroom's curves take 16 points), a value not finite, or x not rising.
  private static func curveNodes(
    _ params: [UInt32], _ index: Int, count: UInt32, _ encoding: (Double) -> Double
  ) -> [(x: Double, y: Double)]? {
    guard (2...16).contains(count) else { return nil }
    var nodes: [(x: Double, y: Double)] = []
    for k in 0..<Int(count) {
      let word = index * 40 + 2 * k
      let (x, y) = (
        Double(Float(bitPattern: params[word])), Double(Float(bitPattern: params[word + 1]))
      )
      guard x.isFinite, y.isFinite else { return nil }
      let point = (
        x: sixPlaces(encoding(min(max(x, 0), 1))), y: sixPlaces(encoding(min(max(y, 0), 1)))
      )
      if let last = nodes.last, point.x <= last.x { return nil }
      nodes.append(point)
    }
    return nodes
  }

  /// A lightness L* / 100 as the encoded sRGB value of a grey that light.
  static func encodedLightness(_ value: Double) -> Double {
    let lightness = 100 * value
    let y =
      lightness > 8 ? pow((lightness + 16) / 116, 3) : lightness / (24389.0 / 27)
    return ColourMath.encode(y)
  }

  /// Points as a curve parameter's text (`x:y,...`); nil for a straight line (no change).
  private static func pointsText(_ nodes: [(x: Double, y: Double)]) -> FilterValue? {
    if nodes.allSatisfy({ abs($0.x - $0.y) < 1e-6 }) { return nil }
    return .text(
      nodes.map { "\(FilterValue.number($0.x)):\(FilterValue.number($0.y))" }.joined(separator: ",")
    )
  }

  /// darktable's `tonecurve` (v5, 130 words; v4 and v3 one and two shorter): curves for L, a
  /// and b through up to 20 nodes each, in lightness (L / 100) and (a + 128) / 256. In its
  /// linked modes (RGB, the default; Lab; XYZ) the L curve acts on the lightness of every
  /// channel alike, drawn as `curve rgb` through the same lightnesses as encoded sRGB
  /// values; the independent a and b curves are not drawn. Approximated: darktable applies
  /// it to a norm of linear ProPhoto RGB (or to L), Darkroom to each encoded channel.
  static func darktableToneCurve(_ params: [UInt32]) -> DarktableModule? {
    guard (128...130).contains(params.count),
      let nodes = curveNodes(params, 0, count: params[120], encodedLightness)
    else { return nil }
    guard let points = pointsText(nodes) else {
      // A straight L curve changes nothing; the a and b curves count only in the independent
      // mode (0), and are not drawn: bent there, the module is named, not drawn.
      if params[126] != 0 { return ([], true) }
      let ab = [1, 2].map { curveNodes(params, $0, count: params[120 + $0]) { $0 } }
      return ab.allSatisfy { $0.map { pointsText($0) == nil } ?? false } ? ([], true) : nil
    }
    guard let node = try? FilterNode("curve", ["rgb": points]) else { return nil }
    return ([node], false)
  }

  /// darktable's `rgbcurve` (v1, 129 words): three curves of up to 20 nodes, in linear RGB
  /// (or in lightness with `compensate_middle_grey`); linked (the default: the first curve
  /// on every channel, through a norm) or one a channel. Drawn as `curve rgb` or `red`,
  /// `green` and `blue` through the nodes as encoded sRGB values: approximated (darktable's
  /// working space is linear Rec. 2020, and its linked curve keeps the colours' ratios).
  static func darktableRGBCurve(_ params: [UInt32]) -> DarktableModule? {
    guard params.count == 129 else { return nil }
    let lightness = params[127] != 0
    let encoding = { (value: Double) -> Double in
      lightness ? encodedLightness(value) : ColourMath.encode(value)
    }
    var values: [String: FilterValue] = [:]
    if params[126] == 0 {
      guard let nodes = curveNodes(params, 0, count: params[120], encoding) else { return nil }
      values["rgb"] = pointsText(nodes)
    } else {
      for (index, channel) in ["red", "green", "blue"].enumerated() {
        guard let nodes = curveNodes(params, index, count: params[120 + index], encoding) else {
          return nil
        }
        values[channel] = pointsText(nodes)
      }
    }
    if values.isEmpty { return ([], true) }
    guard let node = try? FilterNode("curve", values) else { return nil }
    return ([node], false)
  }

  /// darktable's `shadhi`, shadows and highlights (v5, 12 words; v4 11): `shadows` and
  /// `highlights` (-100 to 100; darktable's defaults +50 and -50) brighten the dark and
  /// darken the bright areas against a blur of the image, the shadows only where the blur is
  /// darker than mid-grey (at its default compression). Drawn as `tone shadows` and
  /// `highlights` (per pixel, not against their surroundings), scaled by 0.3 and 0.5, as
  /// much as darktable-cli 4.2 moved two photos on average: approximated.
  static func darktableShadowsHighlights(_ params: [UInt32]) -> DarktableModule? {
    guard params.count == 11 || params.count == 12 else { return nil }
    let (shadows, highlights) = (
      Double(Float(bitPattern: params[2])), Double(Float(bitPattern: params[4]))
    )
    guard shadows.isFinite, highlights.isFinite else { return nil }
    var values: [String: FilterValue] = [:]
    if shadows != 0 {
      values["shadows"] = .number(sixPlaces(max(-1, min(1, shadows / 100 * 0.3))))
    }
    if highlights != 0 {
      values["highlights"] = .number(sixPlaces(max(-1, min(1, highlights / 100 * 0.5))))
    }
    if values.isEmpty { return ([], true) }
    guard let node = try? FilterNode("tone", values) else { return nil }
    return ([node], false)
  }

  /// darktable's `colorbalancergb` (v5, 33 words; v1-v4 are its first 24, 28, 29 and 32):
  /// of its many controls, `contrast` (around its grey fulcrum), `vibrance`, and the global
  /// `chroma` and `saturation` are drawn, as `tone contrast`, `vibrance` and `tone
  /// saturation`; its colour grading (4 ways), brilliance and hue shift are not.
  /// Approximated, always (darktable works in its own perceptual spaces, on scene light).
  static func darktableColorBalance(_ params: [UInt32]) -> DarktableModule? {
    guard [24, 28, 29, 32, 33].contains(params.count) else { return nil }
    let value = { (index: Int) -> Double in
      index < params.count ? Double(Float(bitPattern: params[index])) : 0
    }
    let (chroma, saturation, vibrance, contrast) = (value(17), value(19), value(29), value(31))
    guard [chroma, saturation, vibrance, contrast].allSatisfy(\.isFinite) else { return nil }
    // Its colour grading, white fulcrum, per-range chroma and saturation, hue shift and
    // brilliance, which are not drawn: a module of only those is named, not drawn.
    let undrawn = Array(0...11) + [13, 15, 16, 18] + Array(20...27)
    let grading = undrawn.contains { value($0) != 0 }
    var nodes: [FilterNode] = []
    var tone: [String: FilterValue] = [:]
    if contrast != 0 { tone["contrast"] = .number(sixPlaces(max(-1, min(1, contrast)))) }
    if chroma + saturation != 0 {
      tone["saturation"] = .number(sixPlaces(max(-1, min(1, chroma + saturation))))
    }
    if !tone.isEmpty, let node = try? FilterNode("tone", tone) { nodes.append(node) }
    if vibrance != 0,
      let node = try? FilterNode(
        "vibrance", ["amount": .number(sixPlaces(max(-1, min(1, vibrance))))])
    {
      nodes.append(node)
    }
    return nodes.isEmpty && grading ? nil : (nodes, false)
  }
}
