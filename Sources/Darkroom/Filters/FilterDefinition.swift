/// A filter: a name, a one-line summary, its parameters declared once, and how it changes
/// pixels. One filter, one file, as libvips declares its operations.
protocol FilterDefinition: Sendable {
  static var name: String { get }
  static var summary: String { get }
  /// In order: positional arguments of the text syntax fill them in this order.
  static var parameters: [FilterParameter] { get }
  /// Builds this step of the libvips pipeline on an upright 8-bit sRGB image.
  static func apply(_ arguments: FilterArguments, to image: VipsImage) throws(DarkroomError)
    -> VipsImage
  /// Checks that go beyond single parameters (such as a crop needing all four sides).
  static func validate(_ arguments: FilterArguments) throws(DarkroomError)
  /// Whether the filter works pixel by pixel, row by row (so a pipeline can stream); a
  /// filter that reads its input whole (a detail pass computes it into memory) does not.
  static var streams: Bool { get }
  /// The filter as pointwise steps, for filters that are (nil for geometric ones, which
  /// run through `apply`).
  static func pointwise(_ arguments: FilterArguments) -> [PointwiseStep]?
  /// The filter as a change of ``Placement``, for filters that only move whole pixels (nil
  /// for those that compute new ones, which run through `apply`). The closure gets the
  /// placement so far and the source's name (for messages).
  static func folding(_ arguments: FilterArguments) -> PlacementStep?
  /// Where the filter works: linear light, a perceptual space, or geometry.
  static var space: FilterSpace { get }
  /// The graph document version that first had this filter: a graph using it is written
  /// with that version, so a build that predates it refuses the document instead of
  /// misreading it, and documents of older filters keep their bytes.
  static var since: Int { get }
}

/// Where a filter works, as `darkroom filters` says.
public enum FilterSpace: String, Sendable, Codable {
  /// Light as it adds up (sRGB decoded): exposure, white balance, vignette.
  case linear = "linear light"
  /// sRGB's encoded values, close to how lightness is seen: curves, levels, grain, detail.
  case encoded = "sRGB-encoded (perceptual)"
  /// Oklab, a perceptual space where hue and chroma are each one direction: vibrance, HSL.
  case oklab = "Oklab (perceptual)"
  /// Moves pixels rather than changing them.
  case geometry = "geometry"
  /// Cuts a video's time; pixels are not changed.
  case time = "time"
}

/// A filter's change to where the upright pixels lie in the stored image.
typealias PlacementStep = (inout Placement, _ source: String?) throws(DarkroomError) -> Void

extension FilterDefinition {
  static func validate(_ arguments: FilterArguments) throws(DarkroomError) {}
  static var streams: Bool { true }
  static func pointwise(_ arguments: FilterArguments) -> [PointwiseStep]? { nil }
  static func folding(_ arguments: FilterArguments) -> PlacementStep? { nil }
  static var since: Int { 1 }

  /// A pointwise filter's pixels: its steps, planned and run (a filter that is not
  /// pointwise implements `apply` itself).
  static func apply(_ arguments: FilterArguments, to image: VipsImage) throws(DarkroomError)
    -> VipsImage
  {
    guard let steps = pointwise(arguments) else {
      throw DarkroomError(.engine, file: image.source, "\(name) has no way to render (a bug)")
    }
    return try PointwisePlan.run(steps, on: image)
  }
}

/// What a filter is and takes, for listings and docs (`darkroom filters`).
///
/// `FilterInfo` is a `Sendable` value type.
public struct FilterInfo: Sendable {
  /// The filter's name, as graphs and `--filter` write it: `tone`, `crop`, ...
  public let name: String
  /// What the filter does, in one line.
  public let summary: String
  /// Its parameters, in the order positional values of `--filter` fill them.
  public let parameters: [FilterParameter]
  /// Where it works: linear light, a perceptual space, or geometry.
  public let space: FilterSpace
}

/// Every built-in filter: `noir`, `tone`, `crop`, `rotate`, `flip`, and the panel of a
/// photo editor (`balance`, `light`, `vibrance`, `curve`, `hsl`, `definition`, `texture`,
/// `sharpen`, `denoise`, `vignette`, `grain`, `perspective`, `auto`), and `trim` for videos.
///
/// ```swift
/// for filter in Filters.catalog {
///   print(filter.name, "-", filter.summary)
///   for parameter in filter.parameters { print("  ", parameter.name, parameter.expectation) }
/// }
/// ```
///
/// Build graphs of them with `FilterGraph.parse(spec:)` or ``FilterNode/init(_:_:)``.
/// The catalog is constant: read it from any thread.
public enum Filters {
  static let all: [any FilterDefinition.Type] = [
    NoirFilter.self, ToneFilter.self, CropFilter.self, RotateFilter.self, FlipFilter.self,
    BalanceFilter.self, LightFilter.self, VibranceFilter.self, CurveFilter.self, HSLFilter.self,
    DefinitionFilter.self, TextureFilter.self, SharpenFilter.self, DenoiseFilter.self,
    VignetteFilter.self, GrainFilter.self, PerspectiveFilter.self, WarpFilter.self, AutoFilter.self,
    TrimFilter.self,
  ]

  /// What each built-in filter is and takes, in the order `darkroom filters` lists them.
  public static var catalog: [FilterInfo] {
    all.map {
      FilterInfo(name: $0.name, summary: $0.summary, parameters: $0.parameters, space: $0.space)
    }
  }

  static func named(_ name: String) -> (any FilterDefinition.Type)? {
    all.first { $0.name == name.lowercased() }
  }
}
