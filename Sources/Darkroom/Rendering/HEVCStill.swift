/// A HEIC's primary image decoded without libheif, for display renditions: its HEVC tiles
/// (a phone cuts a 12-megapixel photo into 48 of 512x512) are handed to FFmpeg's HEVC
/// decoder, several at once (`dr_hevc_grid`), each converted to 8-bit RGB straight into its
/// place; then the item's clean aperture, rotation and mirror are applied in the order the
/// file lists them, as libheif applies them, and an alpha plane is joined.
///
/// libheif (through libvips) decodes the tiles one after another with libde265 and converts
/// the whole picture to RGB after; a 256-pixel thumbnail of a phone's HEIC took as long as
/// `vipsthumbnail`'s (Benchmarks/heic.sh has the figures of this way).
///
/// Taken only for what it reads as libheif would: a `hvc1` item or a `grid` of them, whose
/// properties are all ones it knows (`hvcC`, `ispe`, `pixi`, `colr`, `clap`, `irot`, `imir`;
/// an alpha plane's `auxC`), and whose tiles cover the grid. Anything else (an overlay, a
/// layered or otherwise unknown essential property) returns nil and goes through libvips.
struct HEVCStill {
  /// One coded picture: a grid's tiles in raster order, or a single item as one tile.
  struct Picture {
    /// The tiles' `hvcC` records, each once (a phone's tiles share one, and a decoder is
    /// kept from tile to tile while it is the same).
    var configs: [[UInt8]] = []
    /// Each tile's record (an index into ``configs``) and data (a range of ``data``).
    var tiles: [(config: Int, data: Range<Int>)] = []
    /// Every tile's coded data, one after another.
    var data: [UInt8] = []
    var columns: Int
    var tileWidth: Int
    var tileHeight: Int
    /// The picture's size before its transforms (a grid's output size, an item's `ispe`).
    var width: Int
    var height: Int
  }

  let picture: Picture
  /// The alpha plane (an auxiliary image whose `auxC` says alpha), if any.
  let alpha: Picture?
  let transforms: [HEIFTransform]
  /// The size of the largest thumbnail item (`thmb`), as it is shown; nil when it has none.
  let thumbnailSize: (width: Int, height: Int)?
  /// The `nclx` box's matrix (H.273) and range; nil: the bitstream's own.
  let matrix: Int?
  let fullRange: Bool?

  /// The primary image of a HEIC in `bytes`, or nil when it is not one this reads (above).
  init?(_ bytes: [UInt8]) {
    guard let items = HEIFItems(bytes), let picture = Self.picture(items.primary, in: items),
      let transforms = HEIFTransform.list(items.properties(of: items.primary), clap: true)
    else { return nil }
    let known: Set<String> = ["hvcC", "ispe", "pixi", "colr", "clap", "irot", "imir"]
    guard items.properties(of: items.primary).allSatisfy({ known.contains($0.type) }) else {
      return nil
    }
    // Alpha: an auxiliary image (`auxl` to the primary) whose auxC names alpha; other
    // auxiliary images (depth maps) are not shown, as libheif does not show them.
    var alpha: Picture?
    for reference in items.references("auxl") where reference.to.contains(items.primary) {
      guard let urn = items.property("auxC", of: reference.from) else { continue }
      let name = String(decoding: urn.dropFirst(4).prefix { $0 != 0 }, as: UTF8.self)
      guard
        name == "urn:mpeg:hevc:2015:auxid:1"
          || name == "urn:mpeg:mpegB:cicp:systems:auxiliary:alpha"
      else { continue }
      guard let plane = Self.picture(reference.from, in: items),
        plane.width == picture.width, plane.height == picture.height
      else { return nil }
      alpha = plane
    }
    // The container's colour wins over the bitstream's: a grid's own, else its first tile's.
    var matrix: Int?
    var fullRange: Bool?
    var colourItem = items.primary
    if items.property("colr", of: colourItem) == nil, items.types[colourItem] == "grid",
      let first = items.references("dimg").first(where: { $0.from == colourItem })?.to.first
    {
      colourItem = first
    }
    for property in items.properties(of: colourItem) where property.type == "colr" {
      let payload = Array(property.payload)
      guard payload.count >= 11, payload[0..<4] == [0x6E, 0x63, 0x6C, 0x78] else { continue }
      matrix = Int(payload[8]) << 8 | Int(payload[9])
      fullRange = payload[10] & 0x80 != 0
    }
    var thumbnailSize: (width: Int, height: Int)?
    for reference in items.references("thmb") where reference.to.contains(items.primary) {
      guard let size = Self.size(of: reference.from, in: items) else { continue }
      let turned =
        HEIFTransform.list(items.properties(of: reference.from), clap: true)
        .map(HEIFTransform.swapsSides) ?? false
      let shown = turned ? (width: size.height, height: size.width) : size
      if shown.width * shown.height > (thumbnailSize.map { $0.width * $0.height } ?? 0) {
        thumbnailSize = shown
      }
    }
    self.thumbnailSize = thumbnailSize
    self.picture = picture
    self.alpha = alpha
    self.transforms = transforms
    self.matrix = matrix
    self.fullRange = fullRange
  }

  /// The picture an item stands for: its tiles when it is a grid of `hvc1` items, else the
  /// item itself when it is one; nil for anything else, or tiles that do not cover it.
  private static func picture(_ item: Int, in items: HEIFItems) -> Picture? {
    switch items.types[item] {
    case "hvc1":
      guard let size = size(of: item, in: items) else { return nil }
      var picture = Picture(
        columns: 1, tileWidth: size.width, tileHeight: size.height, width: size.width,
        height: size.height)
      return picture.add(item, in: items) ? picture : nil
    case "grid":
      guard let descriptor = items.data(of: item), descriptor.count >= 8, descriptor[0] == 0,
        let parts = items.references("dimg").first(where: { $0.from == item })?.to,
        let first = parts.first, let size = size(of: first, in: items)
      else { return nil }
      let wide = descriptor[1] & 1 == 1
      let rows = Int(descriptor[2]) + 1
      let columns = Int(descriptor[3]) + 1
      guard let width = ISOBoxes.number(descriptor, 4, wide ? 4 : 2),
        let height = ISOBoxes.number(descriptor, wide ? 8 : 6, wide ? 4 : 2),
        parts.count == rows * columns, width > 0, height > 0,
        columns * size.width >= width, rows * size.height >= height,
        (columns - 1) * size.width < width, (rows - 1) * size.height < height
      else { return nil }
      var picture = Picture(
        columns: columns, tileWidth: size.width, tileHeight: size.height, width: width,
        height: height)
      for part in parts {
        guard items.types[part] == "hvc1", let partSize = self.size(of: part, in: items),
          partSize == size, picture.add(part, in: items)
        else { return nil }
      }
      return picture
    default:
      return nil
    }
  }

  private static func size(of item: Int, in items: HEIFItems) -> (width: Int, height: Int)? {
    guard let ispe = items.property("ispe", of: item), ispe.count >= 12 else { return nil }
    let bytes = Array(ispe)
    guard let width = ISOBoxes.number(bytes, 4, 4), let height = ISOBoxes.number(bytes, 8, 4),
      width > 0, height > 0
    else { return nil }
    return (width, height)
  }

  /// The picture decoded, transformed as the file says: 3 bands of 8-bit RGB, 4 with alpha;
  /// no metadata. `skipLoopFilter` for a picture that will be shown at a quarter of its size
  /// or less.
  ///
  /// - Throws: A ``DarkroomError`` about `name`: `corrupt` for a tile that does not decode,
  ///   `tooLarge` for a picture over `maxPixels`, `engine` when FFmpeg cannot be loaded.
  func decode(name: String, maxPixels: Int, threads: Int, skipLoopFilter: Bool)
    throws(DarkroomError) -> VipsImage
  {
    let pixels = picture.width.multipliedReportingOverflow(by: picture.height)
    guard !pixels.overflow, pixels.partialValue <= maxPixels else {
      throw DarkroomError(
        .tooLarge, file: name,
        "image is \(picture.width)x\(picture.height), over the limit of \(maxPixels) pixels")
    }
    let colour = try VideoFrame.decodeHEVCGrid(
      picture, bands: 3, name: name, matrix: matrix, fullRange: fullRange, threads: threads,
      skipLoopFilter: skipLoopFilter)
    var image = try VipsImage.fromPixels(
      colour, width: picture.width, height: picture.height, bands: 3)
    if let alpha {
      let plane = try VideoFrame.decodeHEVCGrid(
        alpha, bands: 1, name: name, matrix: nil, fullRange: nil, threads: threads,
        skipLoopFilter: skipLoopFilter)
      image = try image.joined(
        VipsImage.fromPixels(plane, width: alpha.width, height: alpha.height, bands: 1))
    }
    return try HEIFTransform.apply(transforms, to: image)
  }
}

extension HEVCStill.Picture {
  /// Adds `item` as the next tile: false when it is not a plain picture (a tile's own
  /// transforms or other properties are not read) or its data is not in the file.
  fileprivate mutating func add(_ item: Int, in items: HEIFItems) -> Bool {
    let properties = items.properties(of: item)
    guard properties.allSatisfy({ ["hvcC", "ispe", "pixi", "colr", "auxC"].contains($0.type) }),
      let config = properties.first(where: { $0.type == "hvcC" }).map({ Array($0.payload) }),
      config.count >= 23, let tile = items.data(of: item)
    else { return false }
    let index = configs.firstIndex(of: config) ?? configs.count
    if index == configs.count { configs.append(config) }
    tiles.append((index, data.count..<data.count + tile.count))
    data += tile
    return true
  }
}
