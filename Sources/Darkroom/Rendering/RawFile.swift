import CRaw

/// A camera RAW file (DNG, CR2, CR3, NEF, ARW, RAF, RW2, ORF, ...) read through LibRaw
/// (`Sources/CRaw`): its header, its embedded preview, and a demosaic.
///
/// RAW is trusted in sandboxed workers only (``TrustedFormats/trustedInWorkers``): LibRaw
/// parses dozens of makers' formats, and a hostile file should cost one worker. The
/// renderer shows a RAW from the largest preview the camera embedded when that is at least as
/// large as the rendition (what Lightroom's and Immich's previews do), else from a demosaic,
/// at half size when half suffices. Every result is upright: LibRaw's `flip` is the
/// orientation (``Header/orientation``).
struct RawFile {
  /// What the header says.
  struct Header {
    /// The developed image's size as stored (before ``orientation``).
    var width: Int
    var height: Int
    var orientation: Orientation
    var make: String?
    var model: String?
    var lensMake: String?
    var lens: String?
    var iso: Int?
    var exposureTime: Double?
    var fNumber: Double?
    var focalLength: Double?
    /// The camera's clock when it was taken (no zone), if the file says.
    var date: CaptureDate?
    /// The RAW's own XMP packet (a DNG's, where Lightroom writes its settings), if any.
    var xmp: [UInt8]?
  }

  /// An embedded preview: a JPEG's bytes, or 8-bit RGB pixels.
  enum Preview {
    case jpeg([UInt8])
    case pixels([UInt8], width: Int, height: Int)
  }

  let bytes: [UInt8]
  let name: String

  /// Reads the header (LibRaw's `open_buffer`: nothing is unpacked).
  ///
  /// - Throws: `corrupt` for a file LibRaw does not read; `engine` when LibRaw cannot be
  ///   loaded.
  func header() throws(DarkroomError) -> Header {
    var info = DrRawInfo()
    var error = [CChar](repeating: 0, count: 512)
    let status = bytes.withUnsafeBufferPointer {
      dr_raw_info($0.baseAddress, $0.count, &info, &error, error.count)
    }
    defer { dr_raw_free(info.xmp) }
    try check(status, error)
    let xmp = info.xmp.map { Array(UnsafeBufferPointer(start: $0, count: info.xmp_length)) }
    func text<T>(_ field: T) -> String? {
      let value = withUnsafeBytes(of: field) {
        String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
      }
      return value.isEmpty ? nil : value
    }
    func positive(_ value: Double) -> Double? { value > 0 && value.isFinite ? value : nil }
    let date = withUnsafeBytes(of: info.date) { Array($0.bindMemory(to: Int32.self)).map(Int.init) }
    return Header(
      width: Int(info.width), height: Int(info.height),
      orientation: Orientation(rawValue: Int(info.orientation)) ?? .up,
      make: text(info.make), model: text(info.model), lensMake: text(info.lens_make),
      lens: text(info.lens), iso: positive(info.iso).map { Int($0.rounded()) },
      exposureTime: positive(info.shutter), fNumber: positive(info.aperture),
      focalLength: positive(info.focal_length),
      date: date[0] > 0
        ? CaptureDate(
          exif: date.map(String.init).joined(separator: ":"),
          subsecond: nil, offset: nil) : nil,
      xmp: xmp?.isEmpty == false ? xmp : nil)
  }

  /// The embedded preview LibRaw chose (the largest), stored orientation.
  func preview() throws(DarkroomError) -> Preview {
    var out: UnsafeMutablePointer<UInt8>?
    var length = 0
    var format: Int32 = 0
    var width: Int32 = 0
    var height: Int32 = 0
    var error = [CChar](repeating: 0, count: 512)
    let status = bytes.withUnsafeBufferPointer {
      dr_raw_preview(
        $0.baseAddress, $0.count, &out, &length, &format, &width, &height, &error, error.count)
    }
    defer { dr_raw_free(out) }
    try check(status, error)
    guard let out else { throw DarkroomError(.engine, file: name, "LibRaw gave no preview") }
    let data = Array(UnsafeBufferPointer(start: out, count: length))
    if format == 1 { return .jpeg(data) }
    guard data.count == Int(width) * Int(height) * 3 else {
      throw DarkroomError(.corrupt, file: name, "its preview's size does not match its pixels")
    }
    return .pixels(data, width: Int(width), height: Int(height))
  }

  /// The RAW developed by LibRaw (AHD demosaic, or `half` size; the camera's white
  /// balance; sRGB), upright, as an 8-bit 3-band image.
  func develop(half: Bool, maxPixels: Int) throws(DarkroomError) -> VipsImage {
    var image: UnsafeMutableRawPointer?
    var pixels: UnsafePointer<UInt8>?
    var width: Int32 = 0
    var height: Int32 = 0
    var error = [CChar](repeating: 0, count: 512)
    let status = bytes.withUnsafeBufferPointer {
      dr_raw_develop(
        $0.baseAddress, $0.count, half ? 1 : 0, Int64(maxPixels), &image, &pixels, &width,
        &height, &error, error.count)
    }
    // LibRaw's image is released here, once libvips has its copy.
    defer { dr_raw_release(image) }
    try check(status, error)
    guard let pixels else { throw DarkroomError(.engine, file: name, "LibRaw gave no image") }
    return try VipsImage.fromPixels(
      UnsafeRawBufferPointer(start: pixels, count: Int(width) * Int(height) * 3),
      width: Int(width), height: Int(height), bands: 3)
  }

  private func check(_ status: Int32, _ error: [CChar]) throws(DarkroomError) {
    guard Int(status) != DR_RAW_OK else { return }
    let text = String(decoding: error.prefix { $0 != 0 }.map(UInt8.init), as: UTF8.self)
    let kind: DarkroomError.Kind =
      switch Int(status) {
      case DR_RAW_UNAVAILABLE, DR_RAW_OUT_OF_MEMORY: .engine
      case DR_RAW_TOO_LARGE: .tooLarge
      default: .corrupt
      }
    throw DarkroomError(kind, file: name, text.isEmpty ? "LibRaw cannot read it" : text)
  }
}
