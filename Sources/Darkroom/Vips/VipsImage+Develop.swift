import CVipsShim

/// One pointwise stage of a develop pass (`dr_develop`): what it does, its numbers, and
/// its table where it has one. Built by the filters (``DevelopStage/Kind``), run by libvips.
struct DevelopStage: Sendable, Hashable {
  enum Kind: Int32, Sendable {
    /// A 3x3 matrix on linear light (`numbers`: 9, row-major).
    case linearMatrix = 1
    /// Curves on encoded values (`table`: every channel's, red's, green's, blue's, each
    /// ``DevelopStage/curveSamples`` long).
    case curves = 2
    /// `numbers[0]`: vibrance, in Oklab.
    case vibrance = 3
    /// `table`: hue shift, chroma change and lightness change, 360 each, by Oklab hue.
    case hsl = 4
    /// amount, midpoint, feather, roundness (0 the frame's shape ... 1 a circle).
    case vignette = 5
    /// amount, size in pixels, seed.
    case grain = 6
  }

  /// How many samples each curve of a `.curves` table has (over 0...1, ends included).
  static let curveSamples = 4097

  let kind: Kind
  var numbers: [Double] = []
  var table: [Float] = []

  /// Whether the stage depends on where the pixel is (so not on the stored image before it
  /// is turned upright and cropped).
  var usesPosition: Bool { kind == .vignette || kind == .grain }
}

/// What `dr_detail` computes from an image and a blurred copy of it.
enum DetailKind: Int32, Sendable {
  case sharpen = 1
  case localContrast = 2
  case denoiseLuminance = 3
  case denoiseColour = 4
}

extension VipsImage {
  /// `stages` in order on every pixel, in one pass, in float; alpha is left as it is.
  func developed(_ stages: [DevelopStage]) throws(DarkroomError) -> VipsImage {
    guard !stages.isEmpty else { return self }
    return try colourBands { image throws(DarkroomError) in
      // The C stages point into one array of every table for the length of the call:
      // dr_develop copies them before it returns.
      let tables = stages.flatMap(\.table)
      return try image.derived { out in
        tables.withUnsafeBufferPointer { tables in
          var offset = 0
          let c = stages.map { stage in
            var c = DrStage()
            c.kind = stage.kind.rawValue
            withUnsafeMutableBytes(of: &c.p) { raw in
              let numbers = raw.bindMemory(to: Double.self)
              for (i, value) in stage.numbers.prefix(numbers.count).enumerated() {
                numbers[i] = value
              }
            }
            if !stage.table.isEmpty {
              c.table = tables.baseAddress.map { UnsafePointer($0 + offset) }
              c.table_length = Int32(stage.table.count)
              offset += stage.table.count
            }
            return c
          }
          return c.withUnsafeBufferPointer {
            dr_develop(image.pointer, &out, $0.baseAddress, Int32($0.count))
          }
        }
      }
    }
  }

  /// This image combined pixel by pixel with a blur of it of standard deviation `sigma`.
  ///
  /// The image is computed into memory first, and both the pass and its blur read it there:
  /// libvips' workers then each take their own strips and never wait for one another
  /// (behind a shared line cache, a chain of these passes kept the two workers of a
  /// 24-megapixel panel on CPU about half the time). A blur wide enough is taken on a small
  /// copy of the whole image, sampled by the pass itself.
  func detailed(blurredBy sigma: Double, _ kind: DetailKind, amount: Double, threshold: Double)
    throws(DarkroomError) -> VipsImage
  {
    try colourBands { image throws(DarkroomError) in
      let whole = try image.inMemory()
      if sigma > DR_BLUR_DIRECT_MAX {
        return try whole.derived {
          dr_detail_wide(whole.pointer, &$0, sigma, kind.rawValue, amount, threshold)
        }
      }
      let soft = try whole.blurred(sigma: sigma)
      return try whole.derived {
        dr_detail(whole.pointer, soft.pointer, &$0, kind.rawValue, amount, threshold)
      }
    }
  }

  /// A Gaussian blur of standard deviation `sigma` pixels (colour bands only).
  func blurred(sigma: Double) throws(DarkroomError) -> VipsImage {
    let colour = try colourOnly()
    return try colour.derived { dr_blur(colour.pointer, &$0, sigma) }
  }

  /// Each pixel from where `homography` (row-major, from an output pixel's centre to a
  /// position in this image) takes it, bilinearly; the size is kept.
  func warped(by homography: [Double]) throws(DarkroomError) -> VipsImage {
    precondition(homography.count == 9, "a 3x3 homography")
    return try derived { out in
      homography.withUnsafeBufferPointer { dr_perspective(pointer, &out, $0.baseAddress) }
    }
  }

  /// A `width` x `height` image whose pixel centres `homography` maps into this one
  /// (bilinearly sampled), black where it maps off the image.
  func warped(by homography: [Double], width: Int, height: Int) throws(DarkroomError)
    -> VipsImage
  {
    precondition(homography.count == 9, "a 3x3 homography")
    return try derived { out in
      homography.withUnsafeBufferPointer {
        dr_warp(pointer, &out, $0.baseAddress, Int32(width), Int32(height))
      }
    }
  }

  /// The colour bands alone (without alpha).
  private func colourOnly() throws(DarkroomError) -> VipsImage {
    guard hasAlpha, bands > 1 else { return self }
    return try derived { dr_extract_bands(pointer, &$0, 0, Int32(bands - 1)) }
  }

  /// `body` on three colour bands (made from grey if need be); alpha joined back.
  private func colourBands(_ body: (VipsImage) throws(DarkroomError) -> VipsImage)
    throws(DarkroomError) -> VipsImage
  {
    try onColourBands { colour throws(DarkroomError) in
      try body(colour.bands == 1 ? colour.greyToRGB() : colour)
    }
  }
}
