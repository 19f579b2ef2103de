import CVipsShim

/// Owns one libvips image reference: the only Swift type that holds a `VipsImage*`.
///
/// A libvips image is an immutable recipe for pixels; its reference count is atomic and
/// libvips computes pixels on many threads, so sharing an owner across tasks is safe.
final class VipsImage: @unchecked Sendable {
  let pointer: OpaquePointer
  /// The file (or stream name) the pixels come from, for error messages: libvips decodes
  /// lazily, so a damaged file may only fail when the pipeline runs.
  let source: String?
  /// Memory libvips reads lazily (an image loaded from bytes): kept alive as long as any
  /// image derived from it, because libvips does not copy it.
  private let pinned: PinnedBytes?

  /// Takes over a reference the caller owns.
  private init(
    owning pointer: OpaquePointer, source: String?,
    pinned: PinnedBytes? = nil
  ) {
    self.pointer = pointer
    self.source = source
    self.pinned = pinned
  }

  /// Takes over a reference to an image made from `parent`, keeping what `parent` keeps.
  init(derivedFrom parent: VipsImage, owning pointer: OpaquePointer) {
    self.pointer = pointer
    self.source = parent.source
    self.pinned = parent.pinned
  }

  deinit {
    dr_unref(pointer)
  }

  /// Opens `path` lazily: libvips reads the header now and pixels only when they are pulled.
  static func open(path: String, sequential: Bool, failOn: FailOn = .error) throws(DarkroomError)
    -> VipsImage
  {
    try Vips.start()
    guard let image = dr_image_new_from_file(path, sequential ? 1 : 0, failOn.vipsValue) else {
      throw Vips.takeError(context: "cannot open", file: path)
    }
    return VipsImage(owning: image, source: path)
  }

  /// An 8-bit image of `pixels` (band-interleaved, row after row), copied.
  static func fromPixels(_ pixels: [UInt8], width: Int, height: Int, bands: Int)
    throws(DarkroomError) -> VipsImage
  {
    let made = pixels.withUnsafeBytes { buffer in
      Result { () throws(DarkroomError) in
        try fromPixels(buffer, width: width, height: height, bands: bands)
      }
    }
    return try made.get()
  }

  /// An 8-bit image of the pixels in `buffer` (band-interleaved, row after row), copied: a
  /// decoder's own buffer (LibRaw's) can be released once this returns.
  static func fromPixels(_ buffer: UnsafeRawBufferPointer, width: Int, height: Int, bands: Int)
    throws(DarkroomError) -> VipsImage
  {
    precondition(buffer.count == width * height * bands, "one byte per band per pixel")
    try Vips.start()
    let image = dr_image_from_pixels(
      buffer.baseAddress, buffer.count, Int32(width), Int32(height), Int32(bands))
    guard let image else { throw Vips.takeError(context: "cannot make an image of pixels") }
    return VipsImage(owning: image, source: nil)
  }

  /// The result of `body` on an 8-bit image over the pixels in `buffer` (band-interleaved,
  /// row after row), not copied: every image made from it must be finished with (its pixels
  /// read) before `body` returns. A video's frames go through the graph this way.
  static func over<T>(
    _ buffer: UnsafeRawBufferPointer, width: Int, height: Int, bands: Int,
    _ body: (VipsImage) throws(DarkroomError) -> T
  ) throws(DarkroomError) -> T {
    precondition(buffer.count == width * height * bands, "one byte per band per pixel")
    try Vips.start()
    let image = dr_image_over_pixels(
      buffer.baseAddress, buffer.count, Int32(width), Int32(height), Int32(bands))
    guard let image else { throw Vips.takeError(context: "cannot make an image of pixels") }
    return try body(VipsImage(owning: image, source: nil))
  }

  var width: Int { Int(dr_width(pointer)) }
  var height: Int { Int(dr_height(pointer)) }
  var bands: Int { Int(dr_bands(pointer)) }
  var hasAlpha: Bool { dr_has_alpha(pointer) != 0 }

  /// The name of the libvips loader that opened this image, such as `jpegload`.
  var loader: String? { string(named: "vips-loader") }

  /// A copy of a binary metadata field, such as `exif-data` or `icc-profile-data`.
  func blob(named name: String) -> [UInt8]? {
    var data: UnsafeRawPointer?
    var length = 0
    guard dr_get_blob(pointer, name, &data, &length) == 0, let data, length > 0 else {
      return nil
    }
    return Array(UnsafeRawBufferPointer(start: data, count: length))
  }

  func integer(named name: String) -> Int? {
    var value: Int32 = 0
    guard dr_get_int(pointer, name, &value) == 0 else { return nil }
    return Int(value)
  }

  /// How libvips' `autorot` would turn this image upright: its orientation field, with a
  /// missing or out-of-range value (libvips ignores those) as up.
  var orientation: Orientation {
    integer(named: "orientation").flatMap { Orientation(rawValue: $0) } ?? .up
  }

  func string(named name: String) -> String? {
    var value: UnsafePointer<CChar>?
    guard dr_get_string(pointer, name, &value) == 0, let value else { return nil }
    return String(cString: value)
  }
}

/// Bytes in memory that libvips may read for as long as an image made from them lives.
///
/// Either a copy this object owns and frees, or (`borrowing`) an array's own storage for the
/// duration of a closure, which saves copying a photo's megabytes for every render: no image
/// made from borrowed bytes may outlive the closure.
final class PinnedBytes: @unchecked Sendable {
  let bytes: UnsafeRawBufferPointer
  private let owned: Bool

  init(_ data: [UInt8]) {
    let storage = UnsafeMutableRawBufferPointer.allocate(
      byteCount: max(data.count, 1), alignment: 16)
    data.withUnsafeBytes { storage.copyMemory(from: $0) }
    bytes = UnsafeRawBufferPointer(rebasing: storage[0..<data.count])
    owned = true
  }

  private init(borrowing raw: UnsafeRawBufferPointer) {
    bytes = raw
    owned = false
  }

  /// Runs `body` with `data`'s bytes pinned in place, without a copy. Every image made from
  /// them must be gone when `body` returns (checked in debug builds).
  static func borrowing<R>(_ data: [UInt8], _ body: (PinnedBytes) throws(DarkroomError) -> R)
    throws(DarkroomError) -> R
  {
    let result = data.withUnsafeBytes { raw -> Result<R, DarkroomError> in
      var pinned = PinnedBytes(borrowing: raw)
      defer { assert(isKnownUniquelyReferenced(&pinned), "an image outlived borrowed bytes") }
      return Result { () throws(DarkroomError) in try body(pinned) }
    }
    return try result.get()
  }

  deinit {
    if owned { UnsafeMutableRawPointer(mutating: bytes.baseAddress)?.deallocate() }
  }
}

extension VipsImage {
  /// Opens a file for its header only, after checking that libvips knows its format, so
  /// that "not an image" reads as such rather than as a loader failure.
  static func header(path: String) throws(DarkroomError) -> VipsImage {
    try Vips.start()
    guard dr_can_load_file(path) != 0 else { throw notAnImage(path) }
    return try open(path: path, sequential: true)
  }

  static func header(buffer: PinnedBytes, name: String) throws(DarkroomError) -> VipsImage {
    try Vips.start()
    guard dr_can_load_buffer(buffer.bytes.baseAddress, buffer.bytes.count) != 0 else {
      throw notAnImage(name)
    }
    return try open(buffer: buffer, name: name, sequential: true)
  }

  private static func notAnImage(_ name: String) -> DarkroomError {
    DarkroomError(.unsupportedFormat, file: name, "not an image in any format Darkroom reads")
  }

  /// Darkroom's short name for the format that libvips loaded, such as "jpeg" or "avif".
  var formatName: String {
    guard var name = loader else { return "unknown" }
    for suffix in ["_source", "_buffer", "_file", "load"] where name.hasSuffix(suffix) {
      name.removeLast(suffix.count)
    }
    if name == "heif", string(named: "heif-compression") == "av1" { return "avif" }
    return name
  }
}

extension VipsImage {
  /// Arguments of libvips' `thumbnail`: shrink-on-load, orientation, colour and crop in one
  /// operation.
  struct ThumbnailOptions: Sendable {
    var width: Int
    var height: Int
    /// VipsInteresting: 0 none, 1 centre, 2 entropy, 3 attention.
    var crop: Int32 = 0
    /// VipsSize: 0 both, 1 up, 2 down, 3 force.
    var size: Int32 = 2
    var autoRotate = true
    var failOn: FailOn = .error
    /// Output colour profile; nil keeps libvips' default (sRGB for tagged sources).
    var exportProfile: String?
  }

  static func thumbnail(path: String, _ options: ThumbnailOptions) throws(DarkroomError)
    -> VipsImage
  {
    try Vips.start()
    var out: OpaquePointer?
    let status = options.withC { dr_thumbnail_file(path, $0, &out) }
    guard status == 0, let out else { throw Vips.takeError(context: "cannot render", file: path) }
    return VipsImage(owning: out, source: path)
  }

  static func thumbnail(buffer: PinnedBytes, name: String, _ options: ThumbnailOptions)
    throws(DarkroomError) -> VipsImage
  {
    try Vips.start()
    var out: OpaquePointer?
    let status = options.withC {
      dr_thumbnail_buffer(buffer.bytes.baseAddress, buffer.bytes.count, $0, &out)
    }
    guard status == 0, let out else { throw Vips.takeError(context: "cannot render", file: name) }
    return VipsImage(owning: out, source: name, pinned: buffer)
  }

  /// A JPEG held in memory, decoded at 1/`shrink` of its size by libjpeg's DCT scaling.
  static func openJPEG(buffer: PinnedBytes, name: String, shrink: Int, failOn: FailOn)
    throws(DarkroomError) -> VipsImage
  {
    try Vips.start()
    guard
      let image = dr_jpeg_new_from_buffer_shrunk(
        buffer.bytes.baseAddress, buffer.bytes.count, Int32(shrink), failOn.vipsValue)
    else { throw Vips.takeError(context: "cannot open", file: name) }
    return VipsImage(owning: image, source: name, pinned: buffer)
  }

  /// A JPEG file, decoded at 1/`shrink` of its size as it is read.
  static func openJPEG(path: String, shrink: Int, failOn: FailOn) throws(DarkroomError)
    -> VipsImage
  {
    try Vips.start()
    guard let image = dr_jpeg_new_from_file_shrunk(path, Int32(shrink), failOn.vipsValue) else {
      throw Vips.takeError(context: "cannot open", file: path)
    }
    return VipsImage(owning: image, source: path)
  }

  /// Resize, orientation, colour and crop of libvips' `thumbnail`, on this image.
  func thumbnail(_ options: ThumbnailOptions) throws(DarkroomError) -> VipsImage {
    var out: OpaquePointer?
    let status = options.withC { dr_thumbnail_image(pointer, $0, &out) }
    guard status == 0, let out else { throw Vips.takeError(context: "cannot render", file: source) }
    return VipsImage(derivedFrom: self, owning: out)
  }

  /// libvips' `thumbnail` of this image, with Darkroom's own reduce (`dr_fit`: Lanczos-3 as
  /// libvips' is, in fewer instructions) where the thumbnail is only a reduce and a turn: a
  /// fit (no crop, never larger) of an 8-bit image of one or three bands without alpha, in
  /// its own colour. The size is libvips' (the larger of the two shrinks, each side divided
  /// by it and rounded, the box's sides swapped for a turned image), and the turn its
  /// `autorot`, after the result is in memory (a turn reads out of order, which a sequential
  /// source cannot); anything else is libvips' own.
  func fittedThumbnail(_ options: ThumbnailOptions) throws(DarkroomError) -> VipsImage {
    let turned = orientation.swapsDimensions
    let box = turned ? (options.height, options.width) : (options.width, options.height)
    let shrink = max(Double(width) / Double(box.0), Double(height) / Double(box.1))
    guard options.crop == 0, options.size == 2, options.exportProfile == nil,
      options.autoRotate, !hasAlpha, bands == 3 || bands == 1, shrink > 1
    else { return try thumbnail(options) }
    // As libvips rounds: the side over its scale's inverse (1 / (1 / shrink), which is not
    // always shrink in doubles), the shrink no more than the side.
    func side(_ n: Int) -> Int { Int(Double(n) / (1 / (1 / min(shrink, Double(n)))) + 0.5) }
    let size = (side(width), side(height))
    guard let fitted = try fitted(width: max(1, size.0), height: max(1, size.1)) else {
      return try thumbnail(options)  // not an image dr_fit takes (16-bit, say)
    }
    return orientation == .up ? fitted : try fitted.inMemory().autorotated()
  }

  /// This image (8-bit, one or three bands) made smaller to `width` x `height` by `dr_fit`'s
  /// Lanczos-3, as stored (not turned); nil for another image or a size not smaller.
  func fitted(width: Int, height: Int) throws(DarkroomError) -> VipsImage? {
    var out: OpaquePointer?
    let status = dr_fit(pointer, &out, Int32(width), Int32(height))
    if status == -2 { return nil }
    guard status == 0, let out else { throw Vips.takeError(context: "cannot render", file: source) }
    return VipsImage(derivedFrom: self, owning: out)
  }

  /// Opens an image held in memory, lazily.
  static func open(buffer: PinnedBytes, name: String, sequential: Bool, failOn: FailOn = .error)
    throws(DarkroomError) -> VipsImage
  {
    try Vips.start()
    guard
      let image = dr_image_new_from_buffer(
        buffer.bytes.baseAddress, buffer.bytes.count, sequential ? 1 : 0, failOn.vipsValue)
    else { throw Vips.takeError(context: "cannot open", file: name) }
    return VipsImage(owning: image, source: name, pinned: buffer)
  }

  /// A copy of this image's header to change for output: Orientation 1 (or as stored, for
  /// an image that was not turned upright), no EXIF thumbnail, and GPS (`stripLocation`) and
  /// XMP (`dropXMP`) removed on request.
  func preparedForOutput(upright: Bool, stripLocation: Bool, dropXMP: Bool = false)
    throws(DarkroomError) -> VipsImage
  {
    var out: OpaquePointer?
    guard dr_copy(pointer, &out) == 0, let out else {
      throw Vips.takeError(context: "cannot render", file: source)
    }
    if upright { dr_set_int(out, "orientation", 1) }
    // libvips rebuilds EXIF on save from these fields: a removed field is a removed tag.
    dr_remove_field(out, "jpeg-thumbnail-data")
    dr_remove_fields_with_prefix(out, "exif-ifd1-")
    if stripLocation { dr_remove_fields_with_prefix(out, "exif-ifd3-") }
    if dropXMP { dr_remove_field(out, "xmp-data") }
    return VipsImage(owning: out, source: source, pinned: pinned)
  }

  /// Runs the pipeline and encodes the result; `suffix` names the saver and its options,
  /// as in ".jpg[Q=85,strip]".
  func encode(suffix: String) throws(DarkroomError) -> [UInt8] {
    var buffer: UnsafeMutableRawPointer?
    var length = 0
    guard dr_write_to_buffer(pointer, suffix, &buffer, &length) == 0, let buffer else {
      throw Vips.takeError(context: "cannot render", file: source)
    }
    defer { dr_free(buffer) }
    return Array(UnsafeRawBufferPointer(start: buffer, count: length))
  }

  /// Runs the pipeline and encodes the result as HEIC through libheif, with x265's `preset`
  /// (libvips 8.14's saver cannot choose it); nil when this image or machine is not for it
  /// (not 8-bit, or no libheif): libvips' saver should write it then. `strip` leaves out
  /// EXIF, XMP and the ICC profile.
  func encodeHEIC(quality: Int, preset: String, strip: Bool) throws(DarkroomError) -> [UInt8]? {
    var buffer: UnsafeMutableRawPointer?
    var length = 0
    var error = [CChar](repeating: 0, count: 256)
    let status = dr_write_heic(
      pointer, Int32(quality), preset, strip ? 1 : 0, &buffer, &length, &error, error.count)
    switch status {
    case 0:
      guard let buffer else { return nil }
      defer { dr_free(buffer) }
      return Array(UnsafeRawBufferPointer(start: buffer, count: length))
    case -1: throw Vips.takeError(context: "cannot render", file: source)
    case -2:
      let detail = String(
        decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
      throw DarkroomError(.engine, file: source, "cannot render: \(detail)")
    default: return nil
    }
  }

  /// Runs the pipeline into `buffer` (exactly width x height x bands bytes, 8-bit), on this
  /// thread, in one region: what a video's frame needs, without a thread pool's start or a
  /// copy of the whole.
  func compute(into buffer: UnsafeMutableRawBufferPointer) throws(DarkroomError) {
    switch dr_compute_into(pointer, buffer.baseAddress, buffer.count) {
    case 0: return
    case -2:
      throw DarkroomError(.engine, file: source, "the frame's pixels are not the size expected")
    default: throw Vips.takeError(context: "cannot compute pixels", file: source)
    }
  }

  /// Runs the pipeline into memory: the pixels, band-interleaved, row after row.
  func pixels() throws(DarkroomError) -> [UInt8] {
    var buffer: UnsafeMutableRawPointer?
    var length = 0
    guard dr_write_to_memory(pointer, &buffer, &length) == 0, let buffer else {
      throw Vips.takeError(context: "cannot read pixels", file: source)
    }
    defer { dr_free(buffer) }
    return Array(UnsafeRawBufferPointer(start: buffer, count: length))
  }

  /// The image converted to a colour profile (a libvips built-in name or a file).
  func iccTransform(to profile: String) throws(DarkroomError) -> VipsImage {
    var out: OpaquePointer?
    guard dr_icc_transform(pointer, &out, profile) == 0, let out else {
      throw Vips.takeError(context: "cannot convert colour", file: source)
    }
    return VipsImage(owning: out, source: source, pinned: pinned)
  }

  /// Decodes one pixel (for tests and checks): band values as doubles.
  func pixel(x: Int, y: Int) throws(DarkroomError) -> [Double] {
    var values: UnsafeMutablePointer<Double>?
    var count: Int32 = 0
    guard dr_getpoint(pointer, &values, &count, Int32(x), Int32(y)) == 0, let values else {
      throw Vips.takeError(context: "cannot read pixel \(x),\(y)", file: source)
    }
    defer { dr_free(values) }
    return Array(UnsafeBufferPointer(start: values, count: Int(count)))
  }
}

extension VipsImage.ThumbnailOptions {
  fileprivate func withC<R>(_ body: (UnsafePointer<DrThumbnailOptions>) -> R) -> R {
    func call(_ profile: UnsafePointer<CChar>?) -> R {
      var c = DrThumbnailOptions(
        width: Int32(clamping: width), height: Int32(clamping: height), crop: crop, size: size,
        no_rotate: autoRotate ? 0 : 1, fail_on: failOn.vipsValue, export_profile: profile)
      return body(&c)
    }
    guard let exportProfile else { return call(nil) }
    return exportProfile.withCString(call)
  }
}
