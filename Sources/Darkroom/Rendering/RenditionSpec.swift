/// The representations of an asset, as in PhotoKit's asset model.
public enum Representation: String, Sendable, Codable, CaseIterable {
  /// The original pixels at full size; orientation recorded, not applied.
  case full
  /// Orientation applied, fitted inside a screen turned to match the photo; never upscaled.
  case fullscreen
  /// A square of `size` pixels, orientation applied, cropped to fill.
  case thumbnail
  /// Aspect ratio kept, fitted inside `size` x `size`, orientation applied; never upscaled.
  case aspectThumbnail = "aspect-thumbnail"
}

/// How a square thumbnail chooses what to keep.
public enum ThumbnailCrop: String, Sendable, Codable, CaseIterable {
  case centre, attention, entropy

  var vipsInteresting: Int32 {
    switch self {
    case .centre: 1
    case .entropy: 2
    case .attention: 3
    }
  }
}

/// What metadata an output keeps.
public enum MetadataPolicy: String, Sendable, Codable, CaseIterable {
  /// EXIF kept, with Orientation 1 (pixels are upright) and no embedded EXIF thumbnail.
  case keep
  /// Everything removed: EXIF, XMP, IPTC and the colour profile (outputs are sRGB).
  case strip
  /// As `keep`, without the GPS directory.
  case stripLocation = "strip-location"
}

/// Everything that decides a rendition's pixels and bytes; two equal specs of the same
/// source content give identical output.
public struct RenditionSpec: Sendable, Hashable, Codable {
  public var representation: Representation
  /// The screen box for `fullscreen`, landscape; it is turned to match a portrait photo.
  public var screenWidth = 1920
  public var screenHeight = 1080
  /// The box of `thumbnail` (filled, then cropped) and `aspect-thumbnail` (fitted inside):
  /// `size` x `size` from the command line, any shape from the API.
  public var targetWidth = 256
  public var targetHeight = 256
  public var crop = ThumbnailCrop.centre
  /// nil: the source's own format when Darkroom writes it (else JPEG, or PNG with alpha).
  public var format: ImageFormat?
  /// 1...100, for JPEG, WebP, AVIF and HEIC.
  public var quality = 85
  public var metadata = MetadataPolicy.keep

  public init(_ representation: Representation) {
    self.representation = representation
  }

  /// Sets the square box of `thumbnail` and `aspect-thumbnail`.
  public var size: Int {
    get { max(targetWidth, targetHeight) }
    set { (targetWidth, targetHeight) = (newValue, newValue) }
  }

  /// A stable text form of every field that affects output: part of the cache key.
  var canonical: String {
    var parts = ["rep=\(representation.rawValue)"]
    switch representation {
    case .full: break
    case .fullscreen: parts.append("screen=\(screenWidth)x\(screenHeight)")
    case .thumbnail: parts += ["box=\(targetWidth)x\(targetHeight)", "crop=\(crop.rawValue)"]
    case .aspectThumbnail: parts.append("box=\(targetWidth)x\(targetHeight)")
    }
    parts += [
      "format=\(format?.rawValue ?? "source")", "q=\(quality)", "meta=\(metadata.rawValue)",
    ]
    return parts.joined(separator: ";")
  }
}
