/// A rendered representation: encoded bytes and what they are.
///
/// ```swift
/// let rendition = try await library.image(for: id, RenditionSpec(.fullscreen))
/// try Data(rendition.bytes).write(to: URL(fileURLWithPath: "screen." + rendition.format.fileExtension))
/// ```
///
/// `Rendition` is a `Sendable` value type.
public struct Rendition: Sendable {
  /// The encoded image, ready to write to a file or send.
  public var bytes: [UInt8]
  /// The format of ``bytes``.
  public var format: ImageFormat
  /// The size of the image in pixels: upright, except for a `full` rendition, which keeps
  /// the stored pixels' orientation.
  public var width: Int
  /// The height of the image in pixels (see ``width``).
  public var height: Int
  /// Whether the bytes came from the rendition cache rather than from libvips.
  public var fromCache = false

  /// A rendition of encoded bytes; ``fromCache`` is false.
  public init(bytes: [UInt8], format: ImageFormat, width: Int, height: Int) {
    self.bytes = bytes
    self.format = format
    self.width = width
    self.height = height
  }
}

/// Turns a source and a `RenditionSpec` into encoded bytes with one libvips pipeline, pulled
/// once. It trusts its arguments (the CLI and API check them at the edge) but not its input.
///
/// ```swift
/// var renderer = Renderer()
/// renderer.timeLimit = .seconds(30)
/// var spec = RenditionSpec(.aspectThumbnail)
/// spec.size = 1024
/// let preview = try renderer.render(.file("IMG_0001.jpg"), spec)
/// ```
///
/// A renderer never caches: ``Representations`` and ``ImageManager`` add the rendition cache.
/// `Renderer` is a `Sendable` value type, and one renderer may render on many threads at
/// once. A render blocks its thread until the image is encoded, so call it off the main
/// actor.
package struct Renderer: Sendable {
  /// The largest input, in pixels, Darkroom will decode (``PixelSettings/maxPixels``).
  package var maxPixels: Int

  /// The longest one file's pixel work may take before it is stopped (nil: no limit).
  package var timeLimit: Duration?

  /// How much damage the decoders accept (`--fail-on`).
  package var failOn: FailOn

  /// Worker processes to run the pixel work in, so that a decoder that crashes or hangs
  /// costs one file, not the process; nil renders in this process.
  package var workers: (any PixelWorkers)?

  /// Files up to this size are read into memory once and decoded from there.
  package static let oneReadLimit = 256 << 20

  /// Bumped whenever a change to rendering changes output bytes; part of every cache key.
  package static let renderVersion = 4

  /// A renderer with the defaults of ``PixelSettings``: 268 megapixels, 300 seconds a file.
  package init() { self.init(PixelSettings()) }

  /// A renderer that works to `settings`.
  init(_ settings: PixelSettings) {
    maxPixels = settings.maxPixels
    timeLimit = settings.timeLimit
    failOn = settings.failOn
    workers = settings.workers
  }

  /// The format a spec produces for a source: ``RenditionSpec/format`` when set, else the
  /// source's own format when Darkroom writes it, else PNG for a source with alpha and JPEG
  /// for one without.
  package func outputFormat(_ spec: RenditionSpec, _ metadata: AssetMetadata) -> ImageFormat {
    if let format = spec.format { return format }
    return ImageFormat(sourceFormat: metadata.format) ?? (metadata.hasAlpha ? .png : .jpeg)
  }

  /// The size of the box a spec fits the upright image into.
  func box(_ spec: RenditionSpec, _ metadata: AssetMetadata) -> (width: Int, height: Int) {
    spec.representation == .full
      ? (metadata.width, metadata.height)
      : box(spec, portrait: metadata.displayHeight > metadata.displayWidth)
  }

  /// The box of a display representation (not `full`), for an upright image that is
  /// `portrait` or not.
  func box(_ spec: RenditionSpec, portrait: Bool) -> (width: Int, height: Int) {
    switch spec.representation {
    case .full:
      preconditionFailure("a full representation has the image's own size")
    case .fullscreen:
      let long = max(spec.screenWidth, spec.screenHeight)
      let short = min(spec.screenWidth, spec.screenHeight)
      return portrait ? (short, long) : (long, short)
    case .thumbnail, .aspectThumbnail:
      return (spec.targetWidth, spec.targetHeight)
    }
  }

  /// Reads the source's metadata, then renders `spec` from it.
  ///
  /// A `full` rendition that keeps metadata, in the source's own format, is the source's bytes
  /// as they are: nothing is decoded.
  ///
  /// - Throws: A ``DarkroomError`` about the source: what ``AssetMetadata/read(_:)`` throws;
  ///   `tooLarge` for an image over ``maxPixels``; `engine` when libvips lacks a loader, lcms or
  ///   libexif that the work needs, or fails to decode or encode; `timedOut` after
  ///   ``timeLimit``.
  package func render(_ source: ImageSource, _ spec: RenditionSpec) throws(DarkroomError)
    -> Rendition
  {
    // A file bound for a worker goes there whole: this process neither parses it nor
    // starts libvips for it.
    if let workers = given ?? Offload.workers(for: source) {
      return try workers.render(source, spec, with: self)
    }
    // One read path: a file is read into memory and decoded from there, as an edit decodes
    // its original, so that both reach the same verdict, with the same message, on a
    // damaged file. Very large files are decoded from disk.
    if case .data(let bytes, let name) = source, VideoHeader.recognises(bytes.prefix(64)) {
      let header = try VideoHeader.read(ByteSource(memory: bytes), name: name)
      return try renderVideo(.memory(bytes), name: name, header: header, spec)
    }
    if case .file(let path) = source, let file = try? InputFile(path) {
      // A video is read by FFmpeg through the open file, as far as it needs.
      if let header = try VideoHeader.describe(file, name: path) {
        return try renderVideo(.file(file), name: path, header: header, spec)
      }
      if file.size <= Self.oneReadLimit {
        // libvips' start overlaps reading and parsing the file (a full rendition that keeps
        // its metadata may be the file's bytes, and need no libvips).
        if spec.representation != .full || spec.metadata != .keep { Vips.startInBackground() }
        let bytes = try file.read(at: 0, count: file.size)
        return try render(.data(bytes, name: path), spec)
      }
    }
    return try render(source, spec, metadata: AssetMetadata.read(source))
  }

  /// Renders with metadata the caller already read (it decides the box and the colour path).
  ///
  /// - Throws: A ``DarkroomError`` about the source, as ``render(_:_:)`` does (bar reading
  ///   the metadata), and, for a file, what reading it throws (`notFound`, `io`, ...).
  package func render(_ source: ImageSource, _ spec: RenditionSpec, metadata: AssetMetadata)
    throws(DarkroomError) -> Rendition
  {
    if let workers = given ?? Offload.workers(forFormat: metadata.format)?.workers {
      return try workers.render(source, spec, with: self)
    }
    TestFaults.current.apply(to: source.name)
    return try Vips.attributingErrors(file: source.name) { () throws(DarkroomError) in
      try renderAttributed(source, spec, metadata: metadata)
    }
  }

  /// `body` under this renderer's time limit, from now (``Watchdog/current``): every pull of
  /// its pixels keeps it, an encode's, and what is done before one (a HEIC's tiles by FFmpeg,
  /// an image computed into memory while a graph is built, where a foreign edit's rendition,
  /// a RAW's edit or a preview decode their photo).
  private func keepingTimeLimit<T>(_ body: () throws(DarkroomError) -> T)
    throws(DarkroomError) -> T
  {
    try Watchdog.keeping(timeLimit, from: .now, body)
  }

  private func renderAttributed(
    _ source: ImageSource, _ spec: RenditionSpec, metadata: AssetMetadata
  ) throws(DarkroomError) -> Rendition {
    try keepingTimeLimit { () throws(DarkroomError) in
      try renderWithinLimit(source, spec, metadata: metadata)
    }
  }

  private func renderWithinLimit(
    _ source: ImageSource, _ spec: RenditionSpec, metadata: AssetMetadata
  ) throws(DarkroomError) -> Rendition {
    try checkLimits(source, metadata)
    if let damage = metadata.damage, failOn != .none { throw damage }
    if let edit = shownEdit(spec, metadata) {
      return try renderShowing(edit, source, spec, metadata)
    }
    if metadata.format == "raw" { return try renderRAW(source, spec, metadata) }
    let format = outputFormat(spec, metadata)
    let strip = spec.metadata == .strip

    // The original bytes already are the full representation in their own format.
    if spec.representation == .full, !strip, spec.metadata == .keep,
      ImageFormat(sourceFormat: metadata.format) == format
    {
      return try Rendition(
        bytes: source.bytes(), format: format, width: metadata.width, height: metadata.height)
    }

    let needsSRGB = metadata.iccProfile.map { !Self.isSRGB($0) } ?? false
    try LibvipsCapabilities.current().check(
      metadata, convertsColour: needsSRGB && (spec.representation != .full || strip),
      rotates: spec.representation != .full)
    // The pipeline reads the source's bytes in place; every image is gone when it returns.
    return try Self.pinning(source) { input throws(DarkroomError) -> Rendition in
      let image: VipsImage
      var converted = false  // to sRGB already
      if spec.representation == .full && !(strip && needsSRGB) {
        image = try open(input, sequential: true)
      } else {
        // Shrink-on-load, orientation, colour conversion and crop in one libvips operation.
        let box = box(spec, metadata)
        var options = VipsImage.ThumbnailOptions(width: box.width, height: box.height)
        switch spec.representation {
        case .full:
          options.autoRotate = false  // recorded, not applied; only converted to sRGB
        case .thumbnail:
          options.crop = spec.crop.vipsInteresting
          options.size = 0  // always exactly the box
        case .fullscreen, .aspectThumbnail:
          break  // fitted, never upscaled
        }
        // libvips keeps a source's profile unless asked to convert; display output is sRGB.
        if needsSRGB { options.exportProfile = "srgb" }
        if metadata.format == "jpeg",
          case let shrink = Self.jpegShrink(metadata, box, fill: spec.representation == .thumbnail),
          shrink > 1
        {
          let loaded =
            switch input {
            case .memory(let pinned, let name):
              try VipsImage.openJPEG(buffer: pinned, name: name, shrink: shrink, failOn: failOn)
            case .file(let path): try VipsImage.openJPEG(path: path, shrink: shrink, failOn: failOn)
            }
          image = try loaded.fittedThumbnail(options)
        } else if let (still, colour) = try avifToConvert(source, spec, metadata) {
          image = try avifStill(still, input, source.name, colour, spec, metadata, options)
          converted = true
        } else if let still = try hevcToDecode(source, spec, metadata) {
          image = try hevcStill(still, input, source.name, spec, metadata, options)
        } else {
          image = try thumbnail(input, options)
        }
      }
      // What libvips leaves undone: a HEIF's or AVIF's nclx colour (HDR, P3, BT.2020).
      var shown = image
      if spec.representation != .full, !converted, metadata.iccProfile == nil,
        let colour = metadata.codedColour, colour.needsConversion
      {
        shown = try colour.convertedToSRGB(image)
      }
      let output = try shown.preparedForOutput(
        upright: spec.representation != .full, stripLocation: spec.metadata == .stripLocation)
      let bytes = try Watchdog.shared.guarding(output) {
        () throws(DarkroomError) in
        try output.encode(
          format, quality: spec.quality, effort: ImageFormat.renditionEffort, strip: strip)
      }
      return Rendition(bytes: bytes, format: format, width: output.width, height: output.height)
    }
  }

  /// The AVIF still of a display rendition whose `nclx` colour Darkroom converts (see
  /// ``AVIFStill``), with that colour; nil for anything else, which libvips decodes.
  private func avifToConvert(
    _ source: ImageSource, _ spec: RenditionSpec, _ metadata: AssetMetadata
  )
    throws(DarkroomError) -> (AVIFStill, CodedColour)?
  {
    // Only an AV1-coded HEIF (libheif says `av1`): a HEIC's bytes are not read for nothing.
    guard spec.representation != .full, metadata.format == "avif",
      metadata.iccProfile == nil, let colour = metadata.codedColour, colour.needsConversion
    else { return nil }
    return try AVIFStill(source.bytes()).map { ($0, colour) }
  }

  /// A display rendition's image of an AVIF still: decoded by dav1d straight to the size
  /// that fits (or, for a cropped thumbnail, covers) the box, in sRGB, turned upright; then
  /// fitted or cropped as libvips' thumbnail would, with the file's EXIF and XMP.
  private func avifStill(
    _ still: AVIFStill, _ input: Input, _ name: String, _ colour: CodedColour,
    _ spec: RenditionSpec,
    _ metadata: AssetMetadata, _ options: VipsImage.ThumbnailOptions
  ) throws(DarkroomError) -> VipsImage {
    // libheif reports the size upright (after `irot`); the picture is decoded stored.
    let box = box(spec, metadata)
    let cover = spec.representation == .thumbnail
    let shown = (metadata.width, metadata.height)
    let decodeBox = Self.decodeBox(
      box, shown: shown, stored: still.swapsSides ? (shown.1, shown.0) : shown, cover: cover)
    var image = try still.decode(name: name, box: decodeBox, colour: colour, maxPixels: maxPixels)
    if cover || image.width > box.width || image.height > box.height {
      var fitted = options
      fitted.exportProfile = nil
      image = try image.thumbnail(fitted)
    }
    try copyMetadata(["exif-data", "xmp-data"], from: input, to: image)
    return image
  }

  /// Sets `fields` of `image` (a picture Darkroom decoded itself) to the file's, from
  /// libvips' header (nothing decoded), as its loader gives them.
  private func copyMetadata(_ fields: [String], from input: Input, to image: VipsImage)
    throws(DarkroomError)
  {
    let header = try open(input, sequential: true)
    for field in fields {
      if let blob = header.blob(named: field) { image.setBlob(field, blob) }
    }
  }

  /// The HEIC still of a display rendition that FFmpeg decodes (see ``HEVCStill``); nil for
  /// anything else, which libvips decodes: a HEIC whose `nclx` colour Darkroom converts (HDR,
  /// wide primaries), one it does not read, and one whose thumbnail item is larger than the
  /// rendition (libvips shrinks that, as `vipsthumbnail` does).
  private func hevcToDecode(
    _ source: ImageSource, _ spec: RenditionSpec, _ metadata: AssetMetadata
  ) throws(DarkroomError) -> HEVCStill? {
    guard spec.representation != .full, metadata.format == "heif",
      metadata.codedColour?.needsConversion != true
    else { return nil }
    guard let still = try HEVCStill(source.bytes()) else { return nil }
    if let thumbnail = still.thumbnailSize,
      Self.shrink(
        from: thumbnail, to: box(spec, metadata), cover: spec.representation == .thumbnail)
        > 1
    {
      return nil
    }
    return still
  }

  /// A display rendition's image of a HEIC still: its tiles decoded by FFmpeg on this
  /// process's share of the cores, transformed as the file says, reduced by `dr_fit` to the
  /// size that fits (or, for a cropped thumbnail, covers) the box, then cropped and converted
  /// to sRGB by libvips' thumbnail, with the file's EXIF, XMP and ICC profile. (libvips'
  /// thumbnail of the whole 12-megapixel picture, cropped, took 250 ms; the reduce, 30.)
  private func hevcStill(
    _ still: HEVCStill, _ input: Input, _ name: String, _ spec: RenditionSpec,
    _ metadata: AssetMetadata, _ options: VipsImage.ThumbnailOptions
  ) throws(DarkroomError) -> VipsImage {
    let box = box(spec, metadata)
    let cover = spec.representation == .thumbnail
    let shrink = Self.shrink(from: (metadata.width, metadata.height), to: box, cover: cover)
    // A picture shown at a quarter or less is converted at half its size (a 2x2 average,
    // as libvips' own shrink does before its reduce).
    var image = try still.decode(
      name: name, maxPixels: maxPixels, threads: max(1, Vips.concurrency), halve: shrink >= 4)
    if shrink > 1 {
      // As libvips sizes a thumbnail: each side over the shrink, rounded (the picture's
      // sides, whether or not it was decoded at half of them).
      let size = (
        max(1, Int((Double(metadata.width) / shrink).rounded())),
        max(1, Int((Double(metadata.height) / shrink).rounded()))
      )
      image = try image.fitted(width: size.0, height: size.1) ?? image
    }
    try copyMetadata(["exif-data", "xmp-data", "icc-profile-data"], from: input, to: image)
    // HEIF's turns are its properties, applied above; libvips would turn by the EXIF too.
    var upright = options
    upright.autoRotate = false
    return try image.thumbnail(upright)
  }

  /// How many times smaller an image of `size` must be drawn to fit `box` (`cover`: to cover
  /// it), as libvips' thumbnail reckons its shrink.
  static func shrink(
    from size: (width: Int, height: Int), to box: (width: Int, height: Int), cover: Bool
  )
    -> Double
  {
    guard box.width > 0, box.height > 0 else { return 1 }
    let horizontal = Double(size.width) / Double(box.width)
    let vertical = Double(size.height) / Double(box.height)
    return cover ? min(horizontal, vertical) : max(horizontal, vertical)
  }

  /// How much smaller libjpeg should decode a JPEG for a box: the largest of 8, 4 and 2 that
  /// still leaves at least the output's size (`fill`: the box's short side covered), else 1.
  ///
  /// libvips' `thumbnail` leaves a factor of two for its final resize, so for a 24 MP photo
  /// shown at 1080x1620 it decodes every pixel and then resizes four times as many as this
  /// does. Decoding to just above the target (as ImageMagick's `jpeg:size` does) and
  /// resizing the rest with the same Lanczos kernel made the 24 MP fullscreen render 15%
  /// faster and the thumbnail 11% (Benchmarks/README.md); the result differs from the full
  /// decode by about one level in 255 on average (a test holds it within 3).
  static func jpegShrink(_ metadata: AssetMetadata, _ box: (width: Int, height: Int), fill: Bool)
    -> Int
  {
    let width = Double(metadata.displayWidth)
    let height = Double(metadata.displayHeight)
    guard width > 0, height > 0 else { return 1 }
    let horizontal = Double(box.width) / width
    let vertical = Double(box.height) / height
    let scale = fill ? max(horizontal, vertical) : min(horizontal, vertical)
    guard scale > 0, scale < 1 else { return 1 }
    return [8, 4, 2].first { Double($0) <= 1 / scale } ?? 1
  }

  /// Refuses, from the header alone, an image larger than `maxPixels`.
  func checkLimits(_ source: ImageSource, _ metadata: AssetMetadata) throws(DarkroomError) {
    let pixels = metadata.width.multipliedReportingOverflow(by: metadata.height)
    guard !pixels.overflow, pixels.partialValue <= maxPixels else {
      throw DarkroomError(
        .tooLarge, file: source.name,
        "image is \(metadata.width)x\(metadata.height), over the limit of \(maxPixels) pixels")
    }
  }

  /// Renders an edit at full size: the original turned upright, the recipe's graph
  /// applied, encoded in its format with the original's metadata (Orientation 1) and the
  /// recipe's XMP. The same original and recipe always give the same bytes.
  func renderEdit(_ source: ImageSource, metadata: AssetMetadata, recipe: EditRecipe)
    throws(DarkroomError) -> [UInt8]
  {
    // Stored adjustment data is read leniently; what is rendered must be a graph this
    // build knows, with values in range.
    try recipe.graph.validate(source: source.name, version: recipe.version)
    if let workers = given ?? Offload.workers(forFormat: metadata.format)?.workers {
      return try workers.renderEdit(source, recipe: recipe, with: self)
    }
    TestFaults.current.apply(to: source.name)
    return try Vips.attributingErrors(file: source.name) { () throws(DarkroomError) in
      try renderEditAttributed(source, metadata: metadata, recipe: recipe)
    }
  }

  private func renderEditAttributed(
    _ source: ImageSource, metadata: AssetMetadata, recipe: EditRecipe
  ) throws(DarkroomError) -> [UInt8] {
    try checkLimits(source, metadata)
    if let damage = metadata.damage, failOn != .none { throw damage }
    // A RAW's edit is of its development, whole, upright (LibRaw's sRGB).
    let raw = metadata.format == "raw"
    if !raw {
      // An edit keeps the source's profile with its pixels: no colour conversion.
      try LibvipsCapabilities.current().check(metadata, convertsColour: false, rotates: true)
    }
    return try keepingTimeLimit { () throws(DarkroomError) in
      try renderEditPinned(source, metadata: metadata, recipe: recipe, raw: raw)
    }
  }

  private func renderEditPinned(
    _ source: ImageSource, metadata: AssetMetadata, recipe: EditRecipe, raw: Bool
  ) throws(DarkroomError) -> [UInt8] {
    try Self.pinning(source) { input throws(DarkroomError) -> [UInt8] in
      let edited: VipsImage
      if raw {
        let developed = try rawImage(
          source, metadata, needed: (metadata.displayWidth, metadata.displayHeight), full: true)
        edited = try recipe.graph.apply(to: developed.srgb())
      } else {
        // Crops, turns, flips and pointwise filters up to the first filter that reads
        // neighbours or positions fold into the orientation, so only the pixels kept are
        // filtered and turned. A JPEG streams top to bottom through the crop and the
        // pointwise filters into memory (its decode on one core beside their pass on the
        // others), where it turns; other formats are decoded whole (libvips 8.14's HEIF
        // loader frees the EXIF it lent the image once a sequential read ends, and the saver
        // would then embed freed memory). The rest of the graph runs on the upright result,
        // in memory unless it streams: decoded under the time limit here, so that its
        // filters' own copies into memory (a detail pass reads its input twice) compute
        // only Darkroom's passes, never a decoder.
        let (folding, rest) = recipe.graph.splitAtFirstUnfolding
        let streams = metadata.format == "jpeg"
        let stored = try open(input, sequential: streams)
        var materialized = false
        let upright = try folding.apply(
          toStored: stored, orientation: stored.orientation
        ) { image throws(DarkroomError) in
          guard streams else { return image }
          materialized = true
          return try image.inMemory()  // (under the time limit: Watchdog.current)
        }
        if rest.nodes.isEmpty {
          edited = upright
        } else if !materialized, !rest.streams {
          edited = try rest.apply(to: upright.inMemory())
        } else {
          edited = try rest.apply(to: upright)
        }
      }
      let output = try edited.preparedForOutput(upright: true, stripLocation: false)
      // A motion photo's video goes on with the edited still, described by its XMP.
      let heic = recipe.format == .heic
      let video = try carriedVideo(source, metadata, recipe.format)
      let described = video.flatMap {
        MotionPhoto.describing(recipe.xmp, videoLength: $0.count, heic: heic)
      }
      if !recipe.xmp.isEmpty { output.setBlob("xmp-data", described ?? recipe.xmp) }
      let encoded = try Watchdog.shared.guarding(output) {
        () throws(DarkroomError) in
        try output.encode(
          recipe.format, quality: recipe.quality, effort: recipe.effort,
          strip: recipe.xmp.isEmpty)
      }
      guard let video, described != nil else { return encoded }
      return encoded + MotionPhoto.appended(video, heic: heic)
    }
  }

  /// The embedded video of a motion photo that an edit carries into its result: for a JPEG
  /// or HEIC result (the stills Google's Motion Photo format has), when the bytes where the
  /// metadata says are an MP4; else nil (another format's result is the still alone; the
  /// original, kept, still has the video).
  private func carriedVideo(_ source: ImageSource, _ metadata: AssetMetadata, _ format: ImageFormat)
    throws(DarkroomError) -> [UInt8]?
  {
    guard let range = metadata.motionVideo, format == .jpeg || format == .heic,
      range.offset >= 0, range.length > 0
    else { return nil }
    let video: [UInt8]
    switch source {
    case .data(let bytes, _):
      guard range.offset <= bytes.count - range.length else { return nil }
      video = Array(bytes[range.offset..<range.offset + range.length])
    case .file(let path):
      video = try InputFile(path).read(at: range.offset, count: range.length)
    }
    return video.count == range.length && MotionPhoto.isISOMedia(video) ? video : nil
  }

  /// Where libvips reads a source during one render: a file, or a source's bytes, borrowed
  /// in place for the render (no copy of the photo; no image outlives the render).
  enum Input {
    case file(String)
    case memory(PinnedBytes, name: String)
  }

  static func pinning<R>(_ source: ImageSource, _ body: (Input) throws(DarkroomError) -> R)
    throws(DarkroomError) -> R
  {
    switch source {
    case .file(let path): return try body(.file(path))
    case .data(let bytes, let name):
      return try PinnedBytes.borrowing(bytes) { pinned throws(DarkroomError) in
        try body(.memory(pinned, name: name))
      }
    }
  }

  func open(_ input: Input, sequential: Bool) throws(DarkroomError) -> VipsImage {
    switch input {
    case .file(let path): try VipsImage.open(path: path, sequential: sequential, failOn: failOn)
    case .memory(let pinned, let name):
      try VipsImage.open(buffer: pinned, name: name, sequential: sequential, failOn: failOn)
    }
  }

  func thumbnail(_ input: Input, _ options: VipsImage.ThumbnailOptions)
    throws(DarkroomError) -> VipsImage
  {
    var options = options
    options.failOn = failOn
    switch input {
    case .file(let path): return try VipsImage.thumbnail(path: path, options)
    case .memory(let pinned, let name):
      return try VipsImage.thumbnail(buffer: pinned, name: name, options)
    }
  }

  /// sRGB profiles go by many descriptions ("sRGB IEC61966-2.1", "sRGB built-in", ...).
  static func isSRGB(_ profile: ICCProfileInfo) -> Bool {
    guard let description = profile.description?.lowercased() else { return false }
    return description.contains("srgb")
  }
}

/// What an edit's full-size render needs, as plain values: the graph, the output's format
/// and quality, and the XMP packet to embed. Editing makes it from its adjustment data;
/// Rendering knows nothing of adjustment documents.
struct EditRecipe: Sendable, Codable, Equatable {
  var graph: FilterGraph
  /// The edit's version (for messages about a graph this build cannot render).
  var version: Int
  var format: ImageFormat
  var quality: Int
  /// The encoder effort (HEIC, AVIF); nil: libvips' default, as edits made before efforts
  /// were kept were written.
  var effort: Int?
  /// The packet an edit's result carries; empty for a preview, written with no metadata.
  var xmp: [UInt8]
}
