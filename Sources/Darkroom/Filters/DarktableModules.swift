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
  /// 4.2 at thresholds 0.2, 0.5 and 1: Scripts/darktable-compare.py). Approximated.
  static func darktableSharpen(_ params: [UInt32], raw: Bool) -> DarktableModule? {
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
    let amount = max(-1, min(1, detail * localContrastScale))
    guard let node = try? FilterNode("definition", ["amount": .number(sixPlaces(amount))]) else {
      return nil
    }
    return ([node], false)
  }

  /// `definition`'s amount for each unit of darktable's local contrast `detail`.
  static let localContrastScale = 1.0
}
