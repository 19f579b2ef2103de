import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

/// Which formats Darkroom hands to libvips' decoders.
///
/// libvips reads dozens of formats through dozens of libraries, and the rarely used ones are
/// where hostile files do damage (a JPEG 2000 file that corrupts the heap, an SVGZ that makes
/// the loader spin). Darkroom trusts the formats phones and cameras write: JPEG, PNG, WebP,
/// GIF, HEIF/AVIF and TIFF, recognised by their first bytes before libvips sees the file.
/// JPEG XL is read too, but only in a sandboxed worker (``trustedInWorkers``). Anything else
/// is refused, naming the format, unless it was allowed by name (`svg`, `pdf`, `jp2k`, `fits`,
/// `mat`, `magick`, ...): `TrustedFormats.allow(["svg"])`, or `--allow-format svg` on the
/// command line. Any format can be refused (`--deny-format heif`): ``deny(_:)``.
///
/// Process-wide: set it before any work starts (worker processes inherit it).
package enum TrustedFormats {
  /// Formats Darkroom decodes without being asked.
  package static let trusted: Set<String> = ["jpeg", "png", "webp", "gif", "heif", "avif", "tiff"]

  /// Formats phones and cameras write whose decoders are young (JPEG XL): read without being
  /// asked, but only inside a sandboxed worker (a process that uses workers, and the workers
  /// themselves); a process without workers reads them only when allowed.
  package static let trustedInWorkers: Set<String> = ["jxl", "raw"]

  /// Extensions of camera RAW files whose first bytes are a plain TIFF's (DNG, NEF, ARW,
  /// PEF, ...): those are told from a TIFF by their name. CR2, CR3, ORF, RW2 and RAF have
  /// magic numbers of their own.
  static let tiffRawExtensions: Set<String> = [
    "dng", "nef", "nrw", "arw", "srf", "sr2", "pef", "cr2", "3fr", "erf", "kdc", "dcr", "mos",
    "iiq", "srw", "mef", "rwl",
  ]

  /// Extensions of camera RAW files (``tiffRawExtensions`` and those with magic numbers of
  /// their own).
  static let rawExtensions: Set<String> = tiffRawExtensions.union([
    "cr3", "crw", "orf", "rw2", "raf", "x3f",
  ])

  static let environmentKey = "DARKROOM_ALLOW_FORMATS"
  static let denyKey = "DARKROOM_DENY_FORMATS"

  /// Format names kept in this process and in an environment variable, which the workers it
  /// starts inherit.
  private final class Names: Sendable {
    let key: String
    let names: Locked<Set<String>>

    init(_ key: String) {
      self.key = key
      let listed = ProcessInfo.processInfo.environment[key] ?? ""
      names = Locked(Set(listed.split(separator: ",").map { $0.lowercased() }))
    }

    var current: Set<String> { names.withLock { $0 } }

    func add(_ formats: [String]) {
      let all = names.withLock { names -> Set<String> in
        names.formUnion(formats.map { $0.lowercased() })
        return names
      }
      setenv(key, all.sorted().joined(separator: ","), 1)
    }
  }

  private static let allowedFormats = Names(environmentKey)
  private static let deniedFormats = Names(denyKey)
  private static let sandboxed = Locked(false)

  /// Formats allowed besides the trusted ones.
  package static var allowed: Set<String> { allowedFormats.current }

  /// Allows `formats` (libvips' loader names without `load`: `svg`, `pdf`, `jp2k`, ...) for
  /// this process and the workers it starts.
  package static func allow(_ formats: [String]) { allowedFormats.add(formats) }

  /// Formats refused whatever else says (`--deny-format`).
  package static var denied: Set<String> { deniedFormats.current }

  /// Refuses `formats` (any, trusted ones too: `heif`, `jxl`, ...) for this process and the
  /// workers it starts.
  package static func deny(_ formats: [String]) { deniedFormats.add(formats) }

  /// Says that this process decodes what is outside ``trusted`` in sandboxed workers, or is
  /// one (``Containment``, ``Worker``): ``trustedInWorkers`` are then read without being asked.
  static func decodingInWorkers() { sandboxed.withLock { $0 = true } }

  /// The format the first bytes of a file announce, by their magic numbers: one of
  /// `trusted`, a name for a known untrusted format (`raw` for a camera RAW), or nil. A file
  /// that starts as a TIFF is a RAW when its `name` ends in a RAW's extension
  /// (``tiffRawExtensions``).
  static func sniff(_ head: ArraySlice<UInt8>, name: String? = nil) -> String? {
    let bytes = Array(head.prefix(32))
    func starts(_ magic: [UInt8], at offset: Int = 0) -> Bool {
      bytes.count >= offset + magic.count && Array(bytes[offset..<offset + magic.count]) == magic
    }
    func ascii(_ text: String, at offset: Int = 0) -> Bool { starts(Array(text.utf8), at: offset) }
    if starts([0xFF, 0xD8, 0xFF]) { return "jpeg" }
    // Camera RAW files with magic numbers of their own: Canon's CR2 (a TIFF marked "CR"),
    // Olympus' ORF, Panasonic's RW2, Fujifilm's RAF.
    if (starts([0x49, 0x49, 0x2A, 0x00]) && ascii("CR", at: 8)) || ascii("IIRO") || ascii("IIRS")
      || ascii("MMOR") || starts([0x49, 0x49, 0x55, 0x00]) || ascii("FUJIFILMCCD-RAW")
    {
      return "raw"
    }
    if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "png" }
    if ascii("GIF87a") || ascii("GIF89a") { return "gif" }
    if ascii("RIFF") && ascii("WEBP", at: 8) { return "webp" }
    if starts([0x49, 0x49, 0x2A, 0x00]) || starts([0x4D, 0x4D, 0x00, 0x2A])
      || starts([0x49, 0x49, 0x2B, 0x00]) || starts([0x4D, 0x4D, 0x00, 0x2B])
    {
      if let ext = name.flatMap({ FilePath(OpenedFiles.name(of: $0)).splitExtension?.ext }),
        tiffRawExtensions.contains(ext.lowercased())
      {
        return "raw"
      }
      return "tiff"
    }
    if ascii("ftyp", at: 4), bytes.count >= 12 {
      let brand = String(decoding: bytes[8..<12], as: UTF8.self)
      if ["avif", "avis"].contains(brand) { return "avif" }
      if brand == "crx " { return "raw" }  // Canon's CR3
      if ["heic", "heix", "heim", "heis", "hevc", "hevx", "mif1", "msf1"].contains(brand) {
        return "heif"
      }
      return "video"  // MP4, MOV and other ISO media: not an image libvips should decode
    }
    if starts([0x1F, 0x8B]) { return "svg" }  // gzip: librsvg's svgz, the only gzip loader
    if ascii("<svg") || ascii("<?xml") { return "svg" }
    if ascii("%PDF") { return "pdf" }
    if starts([0x00, 0x00, 0x00, 0x0C, 0x6A, 0x50, 0x20, 0x20]) || starts([0xFF, 0x4F, 0xFF, 0x51])
    {
      return "jp2k"
    }
    if starts([0xFF, 0x0A]) || ascii("JXL ", at: 4) { return "jxl" }
    if ascii("SIMPLE  =") { return "fits" }
    if ascii("MATLAB") { return "mat" }
    if ascii("BM") { return "bmp" }
    if ascii("8BPS") { return "psd" }
    return nil
  }

  /// Whether `format` may reach libvips: trusted, or allowed. Never a video (MP4, MOV):
  /// its container header is read by ``VideoHeader``, and no image loader should take it.
  static func permits(_ format: String) -> Bool {
    guard format != "video", !denied.contains(format) else { return false }
    if trusted.contains(format) || allowed.contains(format) { return true }
    return trustedInWorkers.contains(format) && sandboxed.withLock { $0 }
  }

  /// Refuses a file whose first bytes name a format neither trusted nor allowed.
  static func check(_ head: ArraySlice<UInt8>, file: String) throws(DarkroomError) {
    let format = sniff(head, name: file)
    if let format, permits(format) { return }
    if let format, denied.contains(format) {
      throw DarkroomError(.unsupportedFormat, file: file, "\(format) is refused (--deny-format)")
    }
    if format == "video" {
      throw DarkroomError(
        .unsupportedFormat, file: file,
        "is a video (MP4, MOV), not a photo: this takes photos only (render and edit take videos)"
      )
    }
    guard let format else {
      if !allowed.isEmpty { return }  // libvips may know it; an allowed loader may read it
      throw DarkroomError(
        .unsupportedFormat, file: file, "not an image in any format Darkroom reads")
    }
    throw refusal(format, file: file)
  }

  /// The error for a file in `format`, which is neither trusted nor allowed.
  static func refusal(_ format: String, file: String) -> DarkroomError {
    DarkroomError(
      .unsupportedFormat, file: file,
      "\(format) is not among the trusted formats (JPEG, PNG, WebP, GIF, HEIF/AVIF, TIFF)"
    ).with(.allowFormat(format))
  }
}
