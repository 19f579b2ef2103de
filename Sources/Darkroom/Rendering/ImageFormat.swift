/// Output formats Darkroom writes.
///
/// ```swift
/// var spec = RenditionSpec(.fullscreen)
/// spec.format = ImageFormat(fileExtension: "webp")  // .webp
/// ```
///
/// Darkroom reads more formats than it writes (GIF, say; see ``readOnlyExtensions``).
/// `ImageFormat` is a `Sendable` value type.
public enum ImageFormat: String, Sendable, Codable, CaseIterable {
  /// JPEG, PNG, WebP, AVIF, HEIC and TIFF. The raw values (`jpeg`, `png`, ...) are the names
  /// adjustment data and JSON output use.
  case jpeg, png, webp, avif, heic, tiff

  /// The file extension Darkroom gives outputs in this format.
  public var fileExtension: String {
    switch self {
    case .jpeg: "jpg"
    case .tiff: "tif"
    default: rawValue
    }
  }

  /// Whether the format can carry an alpha (transparency) channel: all but JPEG.
  public var supportsAlpha: Bool { self != .jpeg }

  /// Extensions of image formats Darkroom may read but does not write (`gif`, `bmp`, ...),
  /// so that `-o picture.gif` is told so rather than that its format is unknown.
  public static let readOnlyExtensions: Set<String> = [
    "gif", "bmp", "jp2", "j2k", "jxl", "svg", "svgz", "pdf", "ico", "tga", "ppm", "pgm", "pbm",
    "pnm", "psd", "exr", "hdr", "fits", "raw", "dng", "cr2", "nef", "arw",
  ]

  /// The format an extension names (`jpg`, `JPEG`, `tif`, ...), or nil.
  public init?(fileExtension: String) {
    switch fileExtension.lowercased() {
    case "jpg", "jpeg", "jpe": self = .jpeg
    case "png": self = .png
    case "webp": self = .webp
    case "avif": self = .avif
    case "heic", "heif": self = .heic
    case "tif", "tiff": self = .tiff
    default: return nil
    }
  }

  /// The format Darkroom writes for a source whose format is `name` (from metadata).
  public init?(sourceFormat name: String) {
    switch name {
    case "jpeg": self = .jpeg
    case "png": self = .png
    case "webp": self = .webp
    case "avif": self = .avif
    case "heif": self = .heic
    case "tiff": self = .tiff
    default: return nil
    }
  }

  /// The libvips saver and its options, as a filename suffix for `vips_image_write_to_buffer`.
  func saverSuffix(quality: Int, strip: Bool) -> String {
    var options: [String] = []
    switch self {
    case .jpeg, .webp, .avif, .heic: options.append("Q=\(quality)")
    case .tiff: options.append("compression=deflate")
    case .png: break
    }
    if self == .avif { options.append("compression=av1") }
    if strip { options.append("strip") }
    let suffix = self == .avif ? ".avif" : "." + fileExtension
    return options.isEmpty ? suffix : suffix + "[" + options.joined(separator: ",") + "]"
  }
}
