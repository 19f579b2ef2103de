import CVipsShim

/// Pixel operations for filter graphs: each returns a new lazy image; nothing is computed
/// until the pipeline is encoded.
extension VipsImage {
  /// A new image from a shim call that fills `out`, keeping this image's source and pinned
  /// memory alive with it.
  func derived(_ call: (inout OpaquePointer?) -> Int32) throws(DarkroomError) -> VipsImage {
    var out: OpaquePointer?
    guard call(&out) == 0, let out else {
      throw Vips.takeError(context: "cannot render", file: source)
    }
    return VipsImage(derivedFrom: self, owning: out)
  }

  /// Orientation applied; the result is upright and carries no orientation tag.
  func autorotated() throws(DarkroomError) -> VipsImage {
    try derived { dr_autorot(pointer, &$0) }
  }

  /// 8-bit sRGB (with alpha if there is one).
  func srgb() throws(DarkroomError) -> VipsImage {
    try derived { dr_to_srgb(pointer, &$0) }
  }

  /// Colour bands times a 3x3 matrix, rounded to 8 bits; alpha is left as it is.
  func recombined(_ matrix: [Double]) throws(DarkroomError) -> VipsImage {
    try mixed(matrix, rows: 3)
  }

  /// One grey band from the three colour bands, weighted; alpha is left as it is.
  func greyscale(_ weights: [Double]) throws(DarkroomError) -> VipsImage {
    try mixed(weights, rows: 1)
  }

  /// Colour bands times a `rows`x3 matrix, rounded to 8 bits, as libvips' `recomb`, `rint`
  /// and `cast` would round them: in one pass of the shim's own where it can
  /// (`dr_recomb_is_own`), through those three operations when `byLibvips` is set (the
  /// tests' reference) or it cannot.
  func mixed(_ matrix: [Double], rows: Int, byLibvips: Bool = false) throws(DarkroomError)
    -> VipsImage
  {
    precondition(matrix.count == 3 * rows, "a matrix of \(rows) rows of 3 weights")
    return try onColourBands { image throws(DarkroomError) in
      try image.derived { out in
        matrix.withUnsafeBufferPointer {
          dr_recomb(image.pointer, &out, $0.baseAddress, Int32(rows), byLibvips ? 1 : 0)
        }
      }
    }
  }

  /// Whether `mixed` runs the shim's one pass for this image, which must have exactly three
  /// colour bands and no alpha (with alpha, `mixed` asks the same of its colour bands).
  func mixesInOnePass(_ matrix: [Double], rows: Int) -> Bool {
    matrix.withUnsafeBufferPointer { dr_recomb_is_own(pointer, $0.baseAddress, Int32(rows)) != 0 }
  }

  /// Three colour bands again from one grey band, mapped through `table` on the way (one
  /// pass either way); alpha is left as it is.
  func greyToRGB(through table: [UInt8]? = nil) throws(DarkroomError) -> VipsImage {
    try onColourBands { image throws(DarkroomError) in
      try image.derived { out in
        guard let table else { return dr_grey_to_rgb(image.pointer, &out, nil) }
        return table.withUnsafeBufferPointer { dr_grey_to_rgb(image.pointer, &out, $0.baseAddress) }
      }
    }
  }

  /// Every colour band mapped through a 256-entry table; alpha is left as it is.
  func mapped(_ table: [UInt8]) throws(DarkroomError) -> VipsImage {
    try onColourBands { image throws(DarkroomError) in
      try image.derived { out in
        table.withUnsafeBufferPointer { dr_maplut(image.pointer, &out, $0.baseAddress) }
      }
    }
  }

  func cropped(left: Int, top: Int, width: Int, height: Int) throws(DarkroomError) -> VipsImage {
    try derived {
      dr_extract_area(pointer, &$0, Int32(left), Int32(top), Int32(width), Int32(height))
    }
  }

  /// Quarter turns clockwise (1, 2 or 3).
  func rotated(quarterTurns: Int) throws(DarkroomError) -> VipsImage {
    try derived { dr_rot(pointer, &$0, Int32(quarterTurns)) }
  }

  /// This image computed into memory now (a random-access image however the source is
  /// read); the pipeline's errors are thrown here. Within a render, it keeps the render's
  /// time limit (``Watchdog/current``).
  func inMemory() throws(DarkroomError) -> VipsImage {
    try Watchdog.shared.guarding(self) { () throws(DarkroomError) in
      try derived { dr_copy_memory(pointer, &$0) }
    }
  }

  func flipped(vertically: Bool) throws(DarkroomError) -> VipsImage {
    try derived { dr_flip(pointer, &$0, vertically ? 1 : 0) }
  }

  /// Rotated by any angle, clockwise; the canvas grows to hold the whole image.
  func rotated(degrees: Double) throws(DarkroomError) -> VipsImage {
    try derived { dr_rotate(pointer, &$0, degrees) }
  }

  /// Sets a binary metadata field (such as `xmp-data`) on this image, which must be one
  /// no other pipeline holds (a `preparedForOutput` copy).
  func setBlob(_ name: String, _ bytes: [UInt8]) {
    bytes.withUnsafeBytes { dr_set_blob(pointer, name, $0.baseAddress, $0.count) }
  }

  /// This image with `other`'s bands after its own (an alpha plane joined to colour).
  func joined(_ other: VipsImage) throws(DarkroomError) -> VipsImage {
    try derived { dr_bandjoin(pointer, other.pointer, &$0) }
  }

  /// Applies `body` to the colour bands and joins the alpha band back.
  func onColourBands(_ body: (VipsImage) throws(DarkroomError) -> VipsImage)
    throws(DarkroomError) -> VipsImage
  {
    guard hasAlpha, bands > 1 else { return try body(self) }
    let colour = try derived { dr_extract_bands(pointer, &$0, 0, Int32(bands - 1)) }
    let alpha = try derived { dr_extract_bands(pointer, &$0, Int32(bands - 1), 1) }
    let done = try body(colour)
    return try done.derived { dr_bandjoin(done.pointer, alpha.pointer, &$0) }
  }
}
