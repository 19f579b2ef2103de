import CVideo

/// Where a video's bytes are, for FFmpeg: a file open in this process (read with `pread`,
/// never reopened by path: a sandboxed worker can open none), or bytes in memory.
enum VideoBytes {
  case file(InputFile)
  case memory([UInt8])
}

/// A video's representative frame, decoded by FFmpeg through `CVideo` (dlopen'd on first
/// use), scaled and converted to 8-bit sRGB.
///
/// Which frame: the first, unless it is near-uniform (a fade from black, a white card: a
/// spread of brightness under 10 levels in 255); then frames at 0.5, 1, 1.5 and 2 seconds and
/// every second after, up to ``searchSeconds``, taking the first with content, else the one
/// with the most. A keyframe between two looks is sought to; otherwise decoding goes on.
/// HDR frames (PQ or HLG) are tone-mapped (`dr_hdr_to_srgb8`), BT.2020 primaries converted.
struct VideoFrame {
  /// How far into a video to look for a frame with content.
  static let searchSeconds = 5.0

  var pixels: [UInt8]
  var width: Int
  var height: Int
  /// When the frame is shown, in seconds from the start.
  var time: Double
  /// The frame's spread of brightness (0-255) and how many frames were looked at.
  var spread: Double
  var framesLookedAt: Int
  /// How many frames were decoded on the way (a look at the first frame, or at a keyframe
  /// sought to, decodes that frame alone).
  var framesDecoded: Int
  /// `sdr`, `pq` or `hlg`: the stream's transfer function.
  var transfer: String

  /// Decodes the frame of `bytes`, scaled to fit `box` (stored orientation; each side the
  /// ceiling of the scaled side, so a box computed to cover a size covers it), never up.
  ///
  /// - Throws: A ``DarkroomError`` about `name`: `engine` when FFmpeg cannot be loaded;
  ///   `tooLarge` for frames over `maxPixels`; `corrupt` for a video with no decodable
  ///   frame or damaged streams; `unsupportedFormat` for a file FFmpeg does not read as a
  ///   video, or one with no video stream.
  static func decode(
    _ bytes: VideoBytes, name: String, box: (width: Int, height: Int), maxPixels: Int
  ) throws(DarkroomError) -> VideoFrame {
    var options = DrVideoOptions(
      box_width: Int32(clamping: box.width), box_height: Int32(clamping: box.height),
      max_pixels: Int64(maxPixels), search_seconds: searchSeconds)
    let (frame, pixels) = try decoded(name) { frame, message in
      switch bytes {
      case .file(let file):
        var source = DrVideoSource(fd: file.descriptor, bytes: nil, length: 0)
        return dr_video_frame(&source, &options, &frame, &message, message.count)
      case .memory(let data):
        return data.withUnsafeBufferPointer { buffer in
          var source = DrVideoSource(fd: -1, bytes: buffer.baseAddress, length: buffer.count)
          return dr_video_frame(&source, &options, &frame, &message, message.count)
        }
      }
    }
    return VideoFrame(
      pixels: pixels, width: Int(frame.width),
      height: Int(frame.height), time: frame.time, spread: frame.spread,
      framesLookedAt: Int(frame.frames_looked_at), framesDecoded: Int(frame.frames_decoded),
      transfer: ["sdr", "pq", "hlg"][Int(max(0, min(2, frame.transfer)))])
  }

  /// An AV1 still (an AVIF's primary item, ``AVIFStill``) decoded by `dr_av1_still`: scaled
  /// to fit `box` (stored orientation, never up) and converted from `colour` (the `nclx`
  /// box's, which wins over the bitstream's) to 8-bit sRGB as a still is shown.
  ///
  /// - Throws: A ``DarkroomError`` about `name`: `corrupt` for AV1 data that does not decode,
  ///   `tooLarge` for a picture over `maxPixels`, `engine` when FFmpeg cannot be loaded.
  static func decodeAV1Still(
    _ data: [UInt8], name: String, box: (width: Int, height: Int), colour: CodedColour,
    maxPixels: Int
  ) throws(DarkroomError) -> (pixels: [UInt8], width: Int, height: Int) {
    var options = DrVideoOptions(
      box_width: Int32(clamping: box.width), box_height: Int32(clamping: box.height),
      max_pixels: Int64(maxPixels), search_seconds: 0)
    var coded = DrCodedColour(
      primaries: Int32(clamping: colour.primaries), transfer: Int32(clamping: colour.transfer),
      matrix: Int32(clamping: colour.matrix), full_range: colour.fullRange ? 1 : 0)
    let (frame, pixels) = try decoded(name) { frame, message in
      data.withUnsafeBufferPointer { buffer in
        dr_av1_still(
          buffer.baseAddress, buffer.count, &options, &coded, &frame, &message, message.count)
      }
    }
    return (pixels, Int(frame.width), Int(frame.height))
  }

  /// A HEIC's tiles (``HEVCStill``) decoded onto one canvas by `dr_hevc_grid`, on up to
  /// `threads` threads: 8-bit RGB (`bands` 3) or the luma as it is (1, an alpha plane), at
  /// the picture's size or (`halve`) half of it, each side rounded up. Within a render, no
  /// tile starts once its time limit (``Watchdog/current``) has passed.
  ///
  /// - Throws: what ``HEVCStill/decode(name:maxPixels:threads:halve:)`` says.
  static func decodeHEVCGrid(
    _ picture: HEVCStill.Picture, bands: Int, name: String, matrix: Int?, fullRange: Bool?,
    threads: Int, halve: Bool
  ) throws(DarkroomError) -> (pixels: [UInt8], width: Int, height: Int) {
    let limit = Watchdog.current
    var timeLeft = Double.infinity
    if let limit {
      let left = limit.limit - (ContinuousClock.now - limit.start)
      timeLeft =
        Double(left.components.seconds) + Double(left.components.attoseconds) / 1e18
    }
    let width = halve ? (picture.width + 1) / 2 : picture.width
    let height = halve ? (picture.height + 1) / 2 : picture.height
    let count = width * height * bands
    var message = [CChar](repeating: 0, count: 512)
    var status: Int32 = -1
    // Every byte is written when the decode succeeds: the tiles cover the canvas.
    let canvas = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
      status = Self.withTiles(picture) { tiles in
        var grid = DrHEVCGrid(
          tiles: tiles.baseAddress, tile_count: Int32(tiles.count),
          tile_width: Int32(picture.tileWidth), tile_height: Int32(picture.tileHeight),
          width: Int32(picture.width), height: Int32(picture.height), bands: Int32(bands),
          matrix: Int32(matrix ?? -1), full_range: fullRange.map { $0 ? 1 : 0 } ?? -1,
          threads: Int32(clamping: threads), halve: halve ? 1 : 0, time_left: timeLeft)
        return dr_hevc_grid(&grid, buffer.baseAddress, &message, message.count)
      }
      initialized = status == 0 ? count : 0
    }
    guard status == 0 else {
      let text = String(decoding: message.prefix { $0 != 0 }.map(UInt8.init), as: UTF8.self)
      if text == "timed out", let limit { throw DarkroomError.timedOut(name, after: limit.limit) }
      throw DarkroomError(Self.kind(of: text), file: name, text)
    }
    return (canvas, width, height)
  }

  /// The C descriptions of `picture`'s tiles, valid while `body` runs.
  private static func withTiles(
    _ picture: HEVCStill.Picture, _ body: (UnsafeBufferPointer<DrHEVCTile>) -> Int32
  ) -> Int32 {
    let configs = picture.configs.flatMap { $0 }
    var configStarts: [Int] = []
    var at = 0
    for config in picture.configs {
      configStarts.append(at)
      at += config.count
    }
    return configs.withUnsafeBufferPointer { config in
      picture.data.withUnsafeBufferPointer { data in
        let described = picture.tiles.enumerated().map { index, tile in
          DrHEVCTile(
            config: config.baseAddress.map { $0 + configStarts[tile.config] },
            config_length: picture.configs[tile.config].count,
            data: data.baseAddress.map { $0 + tile.data.lowerBound },
            length: tile.data.count,
            x: Int32(index % picture.columns * picture.tileWidth),
            y: Int32(index / picture.columns * picture.tileHeight))
        }
        return described.withUnsafeBufferPointer(body)
      }
    }
  }

  /// Runs `call`, a `CVideo` decode that fills a frame (or a message), and takes the frame's
  /// 8-bit RGB pixels, whose C buffer is freed here; a failure is thrown about `name` as its
  /// message says (``kind(of:)``).
  private static func decoded(
    _ name: String, _ call: (inout DrVideoFrame, inout [CChar]) -> Int32
  ) throws(DarkroomError) -> (frame: DrVideoFrame, pixels: [UInt8]) {
    var frame = DrVideoFrame()
    var message = [CChar](repeating: 0, count: 512)
    let status = call(&frame, &message)
    defer { dr_video_free(frame.pixels) }
    let text = String(decoding: message.prefix { $0 != 0 }.map(UInt8.init), as: UTF8.self)
    guard status == 0, let pixels = frame.pixels else {
      throw DarkroomError(Self.kind(of: text), file: name, text)
    }
    let count = Int(frame.width) * Int(frame.height) * 3
    return (frame, Array(UnsafeBufferPointer(start: pixels, count: count)))
  }

  /// The kind of error a message from `dr_video_frame`, `dr_av1_still` or
  /// `dr_video_transcode` is (it says it in words: `damaged video: ...`, `damaged image:
  /// ...`, `cannot keep ...` for a trim outside the video).
  static func kind(of message: String) -> DarkroomError.Kind {
    if message.hasPrefix("damaged") { return .corrupt }
    if message.contains("over the limit") { return .tooLarge }
    if message.hasPrefix("cannot keep") { return .invalidArgument }
    if message.hasPrefix("is not a video") || message.hasPrefix("has no video")
      || message.contains("cannot decode")
    {
      return .unsupportedFormat
    }
    return .engine
  }
}

extension CodedColour {
  /// `image` (8 or 16 bits a band; RGB, with or without alpha) as this coding says its
  /// pixels are, converted to 8-bit sRGB by `dr_hdr_to_srgb8`: what libvips, which ignores
  /// `nclx`, leaves undone. The image's metadata (EXIF, XMP) is carried over; it has no ICC
  /// profile (it had none to begin with).
  ///
  /// - Throws: `engine` when libvips cannot compute the pixels.
  func convertedToSRGB(_ image: VipsImage) throws(DarkroomError) -> VipsImage {
    let bytes = try image.pixels()
    let (width, height, bands) = (image.width, image.height, image.bands)
    let count = width * height
    guard count > 0, bands == 3 || bands == 4, bytes.count % (count * bands) == 0 else {
      throw DarkroomError(.engine, file: image.source, "unexpected pixels for a colour conversion")
    }
    let sampleSize = bytes.count / (count * bands)
    var rgb = [UInt16](repeating: 0, count: count * 3)
    var alpha = [UInt8](repeating: 0, count: bands == 4 ? count : 0)
    bytes.withUnsafeBytes { raw in
      for pixel in 0..<count {
        for band in 0..<bands {
          let at = (pixel * bands + band) * sampleSize
          let value =
            sampleSize == 2
            ? raw.loadUnaligned(fromByteOffset: at, as: UInt16.self) : UInt16(raw[at]) * 257
          if band < 3 { rgb[pixel * 3 + band] = value } else { alpha[pixel] = UInt8(value >> 8) }
        }
      }
    }
    var converted = [UInt8](repeating: 0, count: count * 3)
    dr_hdr_to_srgb8(rgb, count, Int32(transfer), Int32(primaries), 1000, 0, &converted)
    var pixels = converted
    if bands == 4 {
      pixels = [UInt8](repeating: 0, count: count * 4)
      for pixel in 0..<count {
        for band in 0..<3 { pixels[pixel * 4 + band] = converted[pixel * 3 + band] }
        pixels[pixel * 4 + 3] = alpha[pixel]
      }
    }
    let out = try VipsImage.fromPixels(pixels, width: width, height: height, bands: bands)
    for field in ["exif-data", "xmp-data"] {
      if let blob = image.blob(named: field) { out.setBlob(field, blob) }
    }
    return out
  }
}
