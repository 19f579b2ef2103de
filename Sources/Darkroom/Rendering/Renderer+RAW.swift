extension Renderer {
  /// A rendition of a camera RAW (``RawFile``), upright, in `spec`'s format (JPEG unless
  /// asked: Darkroom writes no RAW).
  ///
  /// A display rendition comes from the embedded preview when the preview, turned upright,
  /// covers the box (and has the image's shape, within 2%): decoding a camera's JPEG is ten
  /// times quicker than developing the mosaic. Otherwise LibRaw develops it, at half size
  /// when half covers the box. `full` is the whole RAW developed (the file's own bytes are
  /// its original, which `export` and the server's original give).
  func renderRAW(_ source: ImageSource, _ spec: RenditionSpec, _ metadata: AssetMetadata)
    throws(DarkroomError) -> Rendition
  {
    let upright = (width: metadata.displayWidth, height: metadata.displayHeight)
    let box = spec.representation == .full ? upright : box(spec, metadata)
    // The upright size the rendition needs from the source (never more than it has).
    let needed = Self.decodeBox(
      box, shown: (upright.width, upright.height), stored: (upright.width, upright.height),
      cover: spec.representation == .thumbnail)
    let image = try rawImage(source, metadata, needed: needed, full: spec.representation == .full)
    return try finished(image, spec, metadata, box: box)
  }

  /// A RAW's image, upright, of at least `needed` (when it has that much): its embedded
  /// preview when that covers it (and `preview` allows), else LibRaw's development (at half
  /// size when that does; the whole for `full`).
  func rawImage(
    _ source: ImageSource, _ metadata: AssetMetadata, needed: (width: Int, height: Int),
    full: Bool, preview: Bool = true
  ) throws(DarkroomError) -> VipsImage {
    let raw = try RawFile(bytes: source.bytes(), name: source.name)
    let upright = (width: metadata.displayWidth, height: metadata.displayHeight)
    if !full, preview,
      let shown = try previewCovering(raw, needed, upright, metadata.orientation.effective)
    {
      return shown
    }
    let half = !full && needed.width * 2 <= upright.width && needed.height * 2 <= upright.height
    return try raw.develop(half: half, maxPixels: maxPixels)
  }

  /// An upright image made into `spec`'s rendition: fitted into `box` (or, for a thumbnail,
  /// cropped to fill it), its metadata as the spec asks (and its XMP dropped on request),
  /// encoded.
  func finished(
    _ image: VipsImage, _ spec: RenditionSpec, _ metadata: AssetMetadata,
    box: (width: Int, height: Int), exportProfile: String? = nil, dropXMP: Bool = false
  ) throws(DarkroomError) -> Rendition {
    var image = image
    let cover = spec.representation == .thumbnail
    if spec.representation != .full
      && (cover || image.width > box.width || image.height > box.height || exportProfile != nil)
    {
      var options = VipsImage.ThumbnailOptions(width: box.width, height: box.height)
      options.autoRotate = false
      options.exportProfile = exportProfile
      if cover {
        options.crop = spec.crop.vipsInteresting
        options.size = 0
      }
      image = try image.thumbnail(options)
    }
    let output = try image.preparedForOutput(
      upright: true, stripLocation: spec.metadata == .stripLocation, dropXMP: dropXMP)
    let format = outputFormat(spec, metadata)
    let encoded = try Watchdog.shared.guarding(output) {
      () throws(DarkroomError) in
      try output.encode(
        format, quality: spec.quality, effort: ImageFormat.renditionEffort,
        strip: spec.metadata == .strip)
    }
    return Rendition(bytes: encoded, format: format, width: output.width, height: output.height)
  }

  /// The embedded preview, decoded and turned upright, when it covers `needed` and has the
  /// image's shape; nil otherwise (or when there is none, or it does not decode).
  private func previewCovering(
    _ raw: RawFile, _ needed: (width: Int, height: Int), _ upright: (width: Int, height: Int),
    _ orientation: Orientation
  ) throws(DarkroomError) -> VipsImage? {
    guard let preview = try? raw.preview() else { return nil }
    var image: VipsImage
    var jpeg: PinnedBytes?
    switch preview {
    case .jpeg(let data):
      // Opened lazily: only its header is read until it is taken.
      let pinned = PinnedBytes(data)
      guard
        let opened = try? VipsImage.open(
          buffer: pinned, name: raw.name, sequential: true, failOn: failOn)
      else { return nil }
      image = opened
      jpeg = pinned
    case .pixels(let pixels, let width, let height):
      image = try VipsImage.fromPixels(pixels, width: width, height: height, bands: 3)
    }
    // The preview is stored as the sensor is (what the preview's own EXIF says is ignored).
    let swaps = orientation.swapsDimensions
    let shown = swaps ? (image.height, image.width) : (image.width, image.height)
    let shape = Double(shown.0) / Double(shown.1)
    let wanted = Double(upright.width) / Double(upright.height)
    guard shown.0 >= needed.width, shown.1 >= needed.height, abs(shape / wanted - 1) < 0.02 else {
      return nil
    }
    // libjpeg's DCT scaling down to just above what is needed, as for any JPEG.
    if let jpeg,
      let shrink = [8, 4, 2].first(where: {
        shown.0 / $0 >= needed.width && shown.1 / $0 >= needed.height
      })
    {
      image = try VipsImage.openJPEG(buffer: jpeg, name: raw.name, shrink: shrink, failOn: failOn)
    }
    switch orientation {
    case .right: image = try image.rotated(quarterTurns: 1)
    case .down: image = try image.rotated(quarterTurns: 2)
    case .left: image = try image.rotated(quarterTurns: 3)
    default: break
    }
    return image
  }
}
