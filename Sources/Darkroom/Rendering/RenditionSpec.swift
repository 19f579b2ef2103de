/// The representations of an asset, as in PhotoKit's asset model.
///
/// ```swift
/// let screen = try await library.image(for: id, RenditionSpec(.fullscreen))
/// ```
///
/// The raw values (`full`, `fullscreen`, `thumbnail`, `aspect-thumbnail`) are the names the
/// command line and the cache use. `Representation` is a `Sendable` value type.
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
///
/// `ThumbnailCrop` is a `Sendable` value type.
public enum ThumbnailCrop: String, Sendable, Codable, CaseIterable {
  /// `centre` keeps the middle; `attention` the region libvips finds most interesting (edges,
  /// skin tones, saturated colour); `entropy` the region with the most detail.
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
///
/// `MetadataPolicy` is a `Sendable` value type.
public enum MetadataPolicy: String, Sendable, Codable, CaseIterable {
  /// EXIF kept, with Orientation 1 (pixels are upright) and no embedded EXIF thumbnail.
  case keep
  /// Everything removed: EXIF, XMP, IPTC and the colour profile (outputs are sRGB).
  case strip
  /// As `keep`, without the GPS directory.
  case stripLocation = "strip-location"
}

/// Whether a rendition shows the edit another program left for its file (Lightroom's or
/// darktable's settings, ``ForeignEdit``), as Lightroom, Photos and PhotoKit show a photo's
/// edited version, and whose settings those are.
///
/// `ForeignEditChoice` is a `Sendable` value type.
package enum ForeignEditChoice: Sendable, Hashable, Codable {
  /// The file's own pixels (`render --original`).
  case hidden
  /// The settings in the sidecars beside the file (read by ``Representations`` for a file it
  /// is given by path), else in its own XMP: the default.
  case besideFile
  /// These settings (a catalog's, read by its scan), else, for nil, the file's own XMP's.
  case settings(ForeignSettings?)
}

/// Everything that decides a rendition's pixels and bytes; two equal specs of the same
/// source content give identical output.
///
/// ```swift
/// var spec = RenditionSpec(.thumbnail)
/// spec.size = 512
/// spec.crop = .attention
/// spec.format = .webp
/// let thumbnail = try await library.image(for: id, spec)
/// ```
///
/// A spec is part of the rendition cache's key: only the fields its representation uses
/// count, so a `full` spec's `targetWidth` never splits the cache. `RenditionSpec` is a
/// `Sendable` value type.
public struct RenditionSpec: Sendable, Hashable, Codable {
  /// Which representation to render.
  public var representation: Representation
  /// The screen box for `fullscreen`, landscape; it is turned to match a portrait photo.
  public var screenWidth = 1920
  /// The height of the screen box for `fullscreen` (see ``screenWidth``).
  public var screenHeight = 1080
  /// The box of `thumbnail` (filled, then cropped) and `aspect-thumbnail` (fitted inside):
  /// `size` x `size` from the command line, any shape from the API.
  public var targetWidth = 256
  /// The height of the box of `thumbnail` and `aspect-thumbnail` (see ``targetWidth``).
  public var targetHeight = 256
  /// What a `thumbnail` keeps when it crops to its box; other representations ignore it.
  public var crop = ThumbnailCrop.centre
  /// nil: the source's own format when Darkroom writes it (else JPEG, or PNG with alpha).
  public var format: ImageFormat?
  /// 1...100, for JPEG, WebP, AVIF and HEIC.
  public var quality = 85
  /// What metadata the output keeps.
  public var metadata = MetadataPolicy.keep
  /// Whether it shows another program's edit of the file, and whose settings.
  package var foreignEdit = ForeignEditChoice.besideFile

  /// A spec for `representation`, with the defaults: a 1920x1080 screen, a 256x256 box,
  /// centre crop, the source's format, quality 85, and metadata kept.
  public init(_ representation: Representation) {
    self.representation = representation
  }

  /// Sets the square box of `thumbnail` and `aspect-thumbnail`; reading it gives the box's
  /// longer side.
  public var size: Int {
    get { max(targetWidth, targetHeight) }
    set { (targetWidth, targetHeight) = (newValue, newValue) }
  }

  /// A stable text form of every field that affects output: part of the cache key.
  public var canonical: String {
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
    // The file's own XMP is part of its content: only what lies outside it is named.
    switch foreignEdit {
    case .hidden: parts.append("foreign=hidden")
    case .besideFile, .settings(nil): break
    case .settings(let settings?): parts.append("foreign=\(settings.digest)")
    }
    return parts.joined(separator: ";")
  }

  /// What a cache entry says about the edit it shows (beside the content it was made from):
  /// `original` for the file's own pixels, `shown` for its own XMP's edit, if any, or a
  /// digest of the settings given. Renditions are made from one another only with the same.
  var editLabel: String {
    switch foreignEdit {
    case .hidden: "original"
    case .besideFile, .settings(nil): "shown"
    case .settings(let settings?): "xmp-" + settings.digest
    }
  }
}
