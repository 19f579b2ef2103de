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
    // The scale that fits (or, for a cropped thumbnail, covers) the box, never up; decoded
    // to that size in the stored orientation, so libvips only turns, crops and encodes.
    let (shown, stored) = (
      (Double(header.displayWidth), Double(header.displayHeight)),
      (Double(header.width), Double(header.height))
    )
    var decodeBox = (width: 0, height: 0)
    if shown.0 > 0, shown.1 > 0 {
      let across = Double(box.width) / shown.0
      let down = Double(box.height) / shown.1
      let scale = min(1, cover ? max(across, down) : min(across, down))
      decodeBox = (Int((stored.0 * scale).rounded(.up)), Int((stored.1 * scale).rounded(.up)))
    }
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
        format, quality: spec.quality, effort: ImageFormat.defaultEffort, strip: true)
      return Rendition(bytes: encoded, format: format, width: image.width, height: image.height)
    }
  }
}
