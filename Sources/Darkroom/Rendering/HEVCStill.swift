/// A HEIC's primary image decoded without libheif, for display renditions: its HEVC tiles
/// (a phone cuts a 12-megapixel photo into 48 of 512x512) are handed to FFmpeg's HEVC
/// decoder, several at once (`dr_hevc_grid`), each converted to 8-bit RGB straight into its
/// place; then the item's clean aperture, rotation and mirror are applied in the order the
/// file lists them, as libheif applies them, and an alpha plane is joined.
///
/// libheif 1.15 (through libvips) decodes the tiles with libde265, a few at once, and
/// converts the whole picture to RGB after; a 256-pixel thumbnail of a phone's HEIC took as
/// long as `vipsthumbnail`'s (Benchmarks/heic.sh has the figures of this way).
///
/// Taken only for what it reads as libheif would: a `hvc1` item or a `grid` of them, whose
/// properties are all ones it knows (`hvcC`, `ispe`, `pixi`, `colr`, `clap` in whole or half
/// pixels, `irot`, `imir`; an alpha plane's `auxC`, its transforms the image's), whose tiles
/// cover the grid once each, and whose colour boxes agree. Anything else (an overlay, a
/// layered image, any other property) returns nil and goes through libvips.
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
    guard let items = HEIFItems(bytes) else { return nil }
    let primary = items.properties(of: items.primary)
    let known = Self.known
    guard primary.allSatisfy({ known.contains($0.type) }),
      let picture = Self.picture(items.primary, in: items),
      let transforms = HEIFTransform.list(primary, clap: true),
      let colour = Self.colour(items.primary, in: items)
    else { return nil }
    // Alpha: an auxiliary image (`auxl` to the primary) whose auxC names alpha; other
    // auxiliary images (depth maps) are not shown, as libheif does not show them. libheif
    // turns the alpha plane by its own transforms, the colour by the primary's: taken here
    // only when they are the same.
    var alpha: Picture?
    for reference in items.references("auxl") where reference.to.contains(items.primary) {
      let properties = items.properties(of: reference.from)
      guard let urn = properties.first(where: { $0.type == "auxC" })?.payload else { continue }
      let name = String(decoding: urn.dropFirst(4).prefix { $0 != 0 }, as: UTF8.self)
      guard
        name == "urn:mpeg:hevc:2015:auxid:1"
          || name == "urn:mpeg:mpegB:cicp:systems:auxiliary:alpha"
      else { continue }
      guard alpha == nil,
        properties.allSatisfy({ known.contains($0.type) || $0.type == "auxC" }),
        HEIFTransform.list(properties, clap: true) == transforms,
        let plane = Self.picture(reference.from, in: items),
        plane.width == picture.width, plane.height == picture.height
      else { return nil }
      alpha = plane
    }
    // libvips looks at the first thumbnail item only, and only when its shape is the
    // picture's (within 0.1 of its aspect ratio).
    if let reference = items.references("thmb").first(where: { $0.to.contains(items.primary) }),
      ["hvc1", "grid"].contains(items.types[reference.from]),
      let size = Self.size(of: reference.from, in: items)
    {
      let turned =
        HEIFTransform.list(items.properties(of: reference.from), clap: true)
        .map(HEIFTransform.swapsSides) ?? false
      let shown = turned ? (width: size.height, height: size.width) : size
      let main =
        HEIFTransform.swapsSides(transforms)
        ? (width: picture.height, height: picture.width) : (picture.width, picture.height)
      let aspects = (
        Double(shown.width) / Double(shown.height), Double(main.0) / Double(main.1)
      )
      thumbnailSize = abs(aspects.0 - aspects.1) <= 0.1 ? shown : nil
    } else {
      thumbnailSize = nil
    }
    self.picture = picture
    self.alpha = alpha
    self.transforms = transforms
    self.matrix = colour.matrix
    self.fullRange = colour.fullRange
  }

  /// The properties a primary image (and its alpha plane, with `auxC`) may have.
  static let known: Set<String> = ["hvcC", "ispe", "pixi", "colr", "clap", "irot", "imir"]

  /// The largest side a picture's tile (or single picture) may have: libheif's limit.
  static let largestSide = 32768

  /// The colour an item's pictures are converted with, as libheif 1.15 converts them: each
  /// tile (or a single picture) by its own `nclx` box, else by its bitstream's. nil (not
  /// taken) when a grid's tiles disagree, or a box names a matrix swscale does not convert
  /// as H.273 means it (only BT.709, BT.601, BT.2020, SMPTE 240M and FCC are).
  private static func colour(_ item: Int, in items: HEIFItems)
    -> (matrix: Int?, fullRange: Bool?)?
  {
    let pictures = items.types[item] == "grid" ? items.parts(of: item) ?? [] : [item]
    var found: [(matrix: Int?, fullRange: Bool?)] = []
    for picture in Set(pictures) {
      let nclx = items.properties(of: picture).lazy.filter { $0.type == "colr" }
        .compactMap { CodedColour.nclx($0.payload) }.first
      guard let nclx else {
        found.append((nil, nil))
        continue
      }
      guard [1, 2, 4, 5, 6, 7, 9, 10].contains(nclx.matrix) else { return nil }
      found.append((nclx.matrix, nclx.fullRange))
    }
    guard let first = found.first,
      found.allSatisfy({ $0.matrix == first.matrix && $0.fullRange == first.fullRange })
    else { return found.isEmpty ? (nil, nil) : nil }
    return first
  }

  /// The picture an item stands for: its tiles when it is a grid of `hvc1` items, else the
  /// item itself when it is one; nil for anything else, tiles that do not cover it exactly,
  /// a tile named twice, or tiles whose data adds up to more than the file.
  private static func picture(_ item: Int, in items: HEIFItems) -> Picture? {
    switch items.types[item] {
    case "hvc1":
      guard let size = size(of: item, in: items) else { return nil }
      var picture = Picture(
        columns: 1, tileWidth: size.width, tileHeight: size.height, width: size.width,
        height: size.height)
      // Its properties were checked by the caller (an image's or an alpha plane's).
      return picture.add(item, in: items, allowing: known.union(["auxC"])) ? picture : nil
    case "grid":
      guard let descriptor = items.data(of: item), descriptor.count >= 8, descriptor[0] == 0,
        let parts = items.parts(of: item),
        Set(parts).count == parts.count, let first = parts.first,
        let size = size(of: first, in: items)
      else { return nil }
      let wide = descriptor[1] & 1 == 1
      let rows = Int(descriptor[2]) + 1
      let columns = Int(descriptor[3]) + 1
      // Each side at most 256 tiles of 32768: far inside Int32 and Int.
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
          partSize == size,
          picture.add(part, in: items, allowing: ["hvcC", "ispe", "pixi", "colr"])
        else { return nil }
      }
      return picture
    default:
      return nil
    }
  }

  /// An item's `ispe` size: nil when it has none, or a side is 0 or over ``largestSide``.
  private static func size(of item: Int, in items: HEIFItems) -> (width: Int, height: Int)? {
    guard let ispe = items.property("ispe", of: item), ispe.count >= 12 else { return nil }
    let bytes = Array(ispe)
    guard let width = ISOBoxes.number(bytes, 4, 4), let height = ISOBoxes.number(bytes, 8, 4),
      (1...largestSide).contains(width), (1...largestSide).contains(height)
    else { return nil }
    return (width, height)
  }

  /// Whether ``decode(name:maxPixels:threads:halve:)`` can halve the picture: its tiles'
  /// sides are even (a 2x2 block never straddles two) and it has no clean aperture (whose
  /// edges are whole pixels of the full picture).
  var halves: Bool {
    picture.tileWidth % 2 == 0 && picture.tileHeight % 2 == 0
      && (alpha.map { $0.tileWidth % 2 == 0 && $0.tileHeight % 2 == 0 } ?? true)
      && !transforms.contains { if case .crop = $0 { true } else { false } }
  }

  /// The picture decoded, transformed as the file says: 3 bands of 8-bit RGB, 4 with alpha;
  /// no metadata. With `halve` (taken when ``halves``), at half its size, each side rounded
  /// up: each 2x2 block averaged as it is converted, for a picture shown at a quarter of its
  /// size or less.
  ///
  /// FFmpeg's decode runs outside the Watchdog, which stops libvips' pipelines: within a
  /// render, no tile starts once its time limit (``Watchdog/current``) has passed (a tile's
  /// own decode is bounded by its checked size).
  ///
  /// - Throws: A ``DarkroomError`` about `name`: `corrupt` for a tile that does not decode,
  ///   `tooLarge` for a picture over `maxPixels`, `timedOut` past the time limit, `engine`
  ///   when FFmpeg cannot be loaded.
  func decode(name: String, maxPixels: Int, threads: Int, halve: Bool = false)
    throws(DarkroomError) -> VipsImage
  {
    let halve = halve && halves
    let pixels = picture.width.multipliedReportingOverflow(by: picture.height)
    guard !pixels.overflow, pixels.partialValue <= maxPixels else {
      throw DarkroomError(
        .tooLarge, file: name,
        "image is \(picture.width)x\(picture.height), over the limit of \(maxPixels) pixels")
    }
    let colour = try VideoFrame.decodeHEVCGrid(
      picture, bands: 3, name: name, matrix: matrix, fullRange: fullRange, threads: threads,
      halve: halve)
    var image = try VipsImage.fromPixels(
      colour.pixels, width: colour.width, height: colour.height, bands: 3)
    if let alpha {
      let plane = try VideoFrame.decodeHEVCGrid(
        alpha, bands: 1, name: name, matrix: nil, fullRange: nil, threads: threads,
        halve: halve)
      image = try image.joined(
        VipsImage.fromPixels(plane.pixels, width: plane.width, height: plane.height, bands: 1))
    }
    return try HEIFTransform.apply(transforms, to: image)
  }
}

extension HEVCStill.Picture {
  /// Adds `item` as the next tile: false when it has a property not `allowing` (a grid's
  /// tile is a plain picture: its own transforms are not read), or its data is not in the
  /// file, or all the tiles' data would be more than the file.
  fileprivate mutating func add(_ item: Int, in items: HEIFItems, allowing: Set<String>) -> Bool {
    let properties = items.properties(of: item)
    guard properties.allSatisfy({ allowing.contains($0.type) }),
      let config = properties.first(where: { $0.type == "hvcC" }).map({ Array($0.payload) }),
      config.count >= 23, let tile = items.data(of: item),
      data.count + tile.count <= items.bytes.count
    else { return false }
    let index = configs.firstIndex(of: config) ?? configs.count
    if index == configs.count { configs.append(config) }
    tiles.append((index, data.count..<data.count + tile.count))
    data += tile
    return true
  }
}
