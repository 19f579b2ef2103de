extension Renderer {
  /// The edit another program left that a rendition for `spec` shows (``ForeignEdit``): the
  /// spec's settings, else the file's own XMP's; nil when the spec hides it, when there is
  /// none, when the file's pixels already are its result (`crs:AlreadyApplied`, or a file
  /// Darkroom edited), or when nothing in it is rendered.
  func shownEdit(_ spec: RenditionSpec, _ metadata: AssetMetadata) -> ForeignEdit? {
    var metadata = metadata
    switch spec.foreignEdit {
    case .hidden: return nil
    case .besideFile, .settings(nil): break
    case .settings(let settings?): metadata.foreignSettings = settings
    }
    guard let edit = metadata.foreignEdit, !edit.alreadyApplied, !edit.graph.nodes.isEmpty
    else { return nil }
    return edit
  }

  /// A rendition showing `graph` on the upright original: the original is decoded only as
  /// large as the edited rendition needs (a crop of a quarter of the photo shown on a
  /// screen needs twice the screen's size of it: shrink-on-load, a RAW's preview or its
  /// half-size development as for any rendition), the graph is applied (its crops are
  /// fractions or scaled pixels, its tone per pixel: both hold at any size), and the result
  /// is fitted into the box (cropped to fill it, for a thumbnail). `full` is the edit at full
  /// size, in the source's format (as an edit's result would be), keeping its colour profile.
  ///
  /// The output keeps the file's EXIF but not its XMP: that holds the settings just applied,
  /// which a program reading the rendition would apply again.
  ///
  /// A RAW's settings in its own XMP (a DNG's) are developed, never shown over its embedded
  /// preview: Lightroom renders that preview with the edit ("Update DNG Preview").
  func renderShowing(
    _ edit: ForeignEdit, _ source: ImageSource, _ spec: RenditionSpec, _ metadata: AssetMetadata
  ) throws(DarkroomError) -> Rendition {
    let graph = edit.graph
    let upright = (width: metadata.displayWidth, height: metadata.displayHeight)
    let full = spec.representation == .full
    let cover = spec.representation == .thumbnail
    // A graph whose result's size cannot be told from sizes alone is applied to the whole.
    let edited = graph.outputSize(width: upright.width, height: upright.height)
    var box = upright
    var needed = upright
    if !full {
      let shape = edited ?? upright
      box = self.box(spec, portrait: shape.height > shape.width)
      if let edited, edited.width > 0, edited.height > 0 {
        let across = Double(box.width) / Double(edited.width)
        let down = Double(box.height) / Double(edited.height)
        let scale = min(1, cover ? max(across, down) : min(across, down))
        // A fitted rendition takes the size just below, so that no second resize follows;
        // a filled one just above, which the box then crops.
        let rounding: FloatingPointRoundingRule = cover ? .up : .down
        needed = (
          max(1, Int((Double(upright.width) * scale).rounded(rounding))),
          max(1, Int((Double(upright.height) * scale).rounded(rounding)))
        )
      }
    }

    if metadata.format == "raw" {
      let image = try rawImage(
        source, metadata, needed: needed, full: full, preview: edit.source != "XMP")
      let shown = try graph.scalingPixels(by: Double(image.width) / Double(upright.width))
        .apply(to: image.srgb())
      return try finished(shown, spec, metadata, box: box, dropXMP: true)
    }

    let needsSRGB = metadata.iccProfile.map { !Self.isSRGB($0) } ?? false
    try LibvipsCapabilities.current().check(
      metadata, convertsColour: needsSRGB && !full, rotates: true)
    return try Self.pinning(source) { input throws(DarkroomError) -> Rendition in
      var image: VipsImage
      if full {
        // As an edit renders: the whole, upright, in its own profile.
        image = try open(input, sequential: false).autorotated()
      } else {
        // Shrink-on-load, orientation and the conversion to sRGB, as for any rendition.
        var options = VipsImage.ThumbnailOptions(width: needed.width, height: needed.height)
        if needsSRGB { options.exportProfile = "srgb" }
        image = try thumbnail(input, options)
        if metadata.iccProfile == nil, let colour = metadata.codedColour, colour.needsConversion {
          image = try colour.convertedToSRGB(image)
        }
      }
      let shown = try graph.scalingPixels(by: Double(image.width) / Double(upright.width))
        .apply(to: image.srgb())
      return try finished(shown, spec, metadata, box: box, dropXMP: true)
    }
  }
}
