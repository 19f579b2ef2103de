extension Renderer {
  /// Renders a display representation of a video (thumbnail, aspect thumbnail, fullscreen)
  /// from its representative frame (``VideoFrame``): decoded straight to the size asked for,
  /// turned upright by the track's matrix, cropped as a photo's thumbnail is, and encoded as
  /// JPEG unless the spec names a format. A video's `full` representation is its file.
  ///
  /// - Throws: A ``DarkroomError`` about the video: what ``VideoFrame/decode`` throws, and
  ///   `unsupportedFormat` for `full`.
  func renderVideo(
    _ bytes: VideoBytes, name: String, header: VideoHeader, _ spec: RenditionSpec
  ) throws(DarkroomError) -> Rendition {
    guard spec.representation != .full else {
      throw DarkroomError(
        .unsupportedFormat, file: name,
        "is a video: its full representation is the file itself, not an image")
    }
    let box = box(spec, portrait: header.displayHeight > header.displayWidth)
    let cover = spec.representation == .thumbnail
    // Decoded to the size asked for, so libvips only turns, crops and encodes.
    let decodeBox = Self.decodeBox(
      box, shown: (header.displayWidth, header.displayHeight),
      stored: (header.width, header.height),
      cover: cover)
    let frame = try VideoFrame.decode(bytes, name: name, box: decodeBox, maxPixels: maxPixels)
    return try Vips.attributingErrors(file: name) { () throws(DarkroomError) in
      var image = try VipsImage.fromPixels(
        frame.pixels, width: frame.width, height: frame.height, bands: 3)
      if header.rotation != 0 { image = try image.rotated(quarterTurns: header.rotation / 90) }
      if cover || image.width > box.width || image.height > box.height {
        var options = VipsImage.ThumbnailOptions(width: box.width, height: box.height)
        if cover {
          options.crop = spec.crop.vipsInteresting
          options.size = 0
        }
        image = try image.thumbnail(options)
      }
      let format = spec.format ?? .jpeg
      let encoded = try image.encode(
        format, quality: spec.quality, effort: ImageFormat.renditionEffort, strip: true)
      return Rendition(bytes: encoded, format: format, width: image.width, height: image.height)
    }
  }

  /// The box a picture is decoded into, in its stored orientation: the scale that fits (or,
  /// with `cover`, covers) `box` when the picture is `shown` upright, never up, applied to
  /// its `stored` size, each side rounded up (a box computed to cover covers). (0, 0), its
  /// own size, for a picture of no size.
  static func decodeBox(
    _ box: (width: Int, height: Int), shown: (Int, Int), stored: (Int, Int), cover: Bool
  ) -> (width: Int, height: Int) {
    guard shown.0 > 0, shown.1 > 0 else { return (0, 0) }
    let across = Double(box.width) / Double(shown.0)
    let down = Double(box.height) / Double(shown.1)
    let scale = min(1, cover ? max(across, down) : min(across, down))
    return (
      Int((Double(stored.0) * scale).rounded(.up)), Int((Double(stored.1) * scale).rounded(.up))
    )
  }
}
