/// An AVIF's primary image decoded without libheif, for display renditions of AVIFs whose
/// `nclx` colour Darkroom converts itself (HDR, BT.2020, Display P3): the AV1 item is handed
/// to FFmpeg's AV1 decoder (dav1d), and its one picture is scaled into the box as it is
/// converted to RGB, then tone-mapped there (`dr_av1_still`).
///
/// Through libvips, libheif decodes the image, copies it, and converts it to 16-bit RGB at
/// full size before anything is shrunk: a 20-megapixel 10-bit PQ AVIF peaked at 550 MB for a
/// 1080-pixel fullscreen (issue 29's goal: under 250 MB). Here it peaks near 180 MB
/// (Benchmarks/hdr.sh).
///
/// Taken only for what libheif would show the same way: a single `av01` item (not a grid),
/// with no alpha or other auxiliary image, no clean aperture (`clap`) and no layers (`a1op`,
/// `lsel`); anything else goes through libvips as before. `irot` and `imir` are applied here,
/// in their order, as libheif applies them; the EXIF orientation is not (HEIF's transforms are
/// the properties, as libvips and libheif have it).
struct AVIFStill {
  /// The AV1 item's data: its OBUs, the sequence header first.
  let data: [UInt8]
  let transforms: [HEIFTransform]

  /// The primary image of an AVIF in `bytes`, or nil when it is not one this reads (above).
  init?(_ bytes: [UInt8]) {
    guard let items = HEIFItems(bytes), items.types[items.primary] == "av01",
      !items.references("auxl").contains(where: { $0.to.contains(items.primary) }),
      let data = items.data(of: items.primary)
    else { return nil }
    let properties = items.properties(of: items.primary)
    guard !properties.contains(where: { $0.type == "a1op" || $0.type == "lsel" }),
      let transforms = HEIFTransform.list(properties, clap: false)
    else { return nil }
    self.data = data
    self.transforms = transforms
  }

  /// Whether the transforms turn the image a quarter (its sides swap when shown).
  var swapsSides: Bool { HEIFTransform.swapsSides(transforms) }

  /// The image scaled to fit `box` (stored orientation, never up), converted from `colour`
  /// to 8-bit sRGB, then transformed: 3 bands, no metadata.
  ///
  /// - Throws: A ``DarkroomError`` about `name`: `corrupt` for AV1 data that does not decode,
  ///   `tooLarge` for a picture over `maxPixels`, `engine` when FFmpeg cannot be loaded.
  func decode(
    name: String, box: (width: Int, height: Int), colour: CodedColour, maxPixels: Int
  ) throws(DarkroomError) -> VipsImage {
    let frame = try VideoFrame.decodeAV1Still(
      data, name: name, box: box, colour: colour, maxPixels: maxPixels)
    let image = try VipsImage.fromPixels(
      frame.pixels, width: frame.width, height: frame.height, bands: 3)
    return try HEIFTransform.apply(transforms, to: image)
  }
}
