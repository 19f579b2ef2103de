/// How big an asset shows: here, beside the filters that decide it, so that the catalog's
/// row type names no filter (the catalog sits below the filters).
extension Asset {
  /// Its size as its representations show it, upright: the edit made elsewhere's result
  /// (`foreignSettings`: a crop's size) when it has one, else ``displayWidth`` x
  /// ``displayHeight``. What a grid lays the asset out by.
  public var shownSize: (width: Int, height: Int) {
    let upright = (width: displayWidth, height: displayHeight)
    // As the renditions place it: darktable's perspective runs on the pixels as stored,
    // before the EXIF turn.
    let turn = mediaType == .photo ? Orientation(rawValue: orientation) ?? .up : .up
    guard let settings = foreignSettings,
      let edit = ForeignEdit(
        settings, width: upright.width, height: upright.height, raw: format == "raw",
        orientation: turn),
      !edit.alreadyApplied,
      let size = edit.graph.outputSize(width: upright.width, height: upright.height)
    else { return upright }
    return size
  }
}
