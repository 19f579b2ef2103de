/// The quality an AVIF photo was written at, estimated from its bitstream: the `base_q_idx`
/// of the primary image's (or its grid's first tile's) frame header, turned into libheif's
/// quality scale, as ``HEVCQuality`` does for a HEIC. A file libheif (or libvips, through it)
/// wrote at quality Q gives back Q within a few points.
///
/// ```swift
/// let quality = AV1Quality.estimate(bytes)  // nil: not an AVIF this reader follows
/// ```
package enum AV1Quality {
  /// The estimate, or nil for bytes that are not an AVIF whose first frame is a shown key
  /// frame this reader follows.
  package static func estimate(_ bytes: [UInt8]) -> Int? {
    guard let index = baseQIndex(bytes) else { return nil }
    // libheif's aom encoder: cq-level = round((100 - Q) * 63 / 100), a quantizer of 0-63,
    // whose qindex (0-255) is about four times it (aom's quantizer_to_qindex).
    let quantizer = Double(index) / 4.0
    return min(100, max(1, Int((100 - quantizer * 100 / 63).rounded())))
  }

  /// The `base_q_idx` of the primary image's first frame.
  static func baseQIndex(_ bytes: [UInt8]) -> Int? {
    guard let (config, data) = HEVCQuality.primaryCoded(bytes, type: "av01", property: "av1C")
    else { return nil }
    // The sequence header: in the item's own OBUs, else in av1C's configOBUs.
    var sequence: AV1Sequence?
    for (type, payload, _) in obus(data) where type == 1 {
      sequence = AV1Sequence(payload)
      break
    }
    if sequence == nil, config.count > 4 {
      for (type, payload, _) in obus(config.dropFirst(4)) where type == 1 {
        sequence = AV1Sequence(payload)
        break
      }
    }
    guard let sequence else { return nil }
    for (type, payload, temporal) in obus(data) where type == 3 || type == 6 {
      return sequence.baseQIndex(
        frameHeader: payload, temporalID: temporal.0, spatialID: temporal.1)
    }
    return nil
  }

  /// The OBUs of `data` (each with its size field): type, payload and the extension's
  /// temporal and spatial ids; at most 16, stopping at anything malformed.
  static func obus(_ data: ArraySlice<UInt8>) -> [(Int, ArraySlice<UInt8>, (Int, Int))] {
    var found: [(Int, ArraySlice<UInt8>, (Int, Int))] = []
    var at = data.startIndex
    while at < data.endIndex, found.count < 16 {
      let header = data[at]
      let type = Int(header >> 3) & 0xF
      let hasExtension = header & 0x04 != 0
      let hasSize = header & 0x02 != 0
      at += 1
      var ids = (0, 0)
      if hasExtension {
        guard at < data.endIndex else { break }
        ids = (Int(data[at] >> 5), Int(data[at] >> 3) & 3)
        at += 1
      }
      var size = data.endIndex - at
      if hasSize {
        var value = 0
        var shift = 0
        var done = false
        while at < data.endIndex, shift < 56 {
          let byte = data[at]
          value |= Int(byte & 0x7F) << shift
          at += 1
          shift += 7
          if byte & 0x80 == 0 {
            done = true
            break
          }
        }
        guard done else { break }
        size = value
      }
      guard size >= 0, size <= data.endIndex - at else { break }
      found.append((type, data[at..<at + size], ids))
      at += size
    }
    return found
  }
}

/// What the frame header's parsing needs of an AV1 sequence header (AV1 specification 5.5),
/// and the frame header read up to `base_q_idx` (5.9.2, 5.9.15, 5.9.12).
struct AV1Sequence {
  var reduced = false
  var decoderModel = false
  var equalPictureInterval = false
  var bufferRemovalTimeLength = 0
  var presentationTimeLength = 0
  var operatingPoints: [(idc: Int, decoderModel: Bool)] = []
  var widthBits = 0, heightBits = 0, maxWidth = 0, maxHeight = 0
  var frameIDs = false
  var frameIDLength = 0
  var largeSuperblocks = false
  var forceScreenContentTools = 2
  var forceIntegerMV = 2
  var orderHintBits = 0
  var superres = false

  init?(_ payload: ArraySlice<UInt8>) {
    var r = BitReader(Array(payload))
    guard r.skip(3), r.skip(1), let reducedFlag = r.bits(1) else { return nil }
    reduced = reducedFlag == 1
    if reduced {
      guard r.skip(5) else { return nil }
      operatingPoints = [(0, false)]
    } else {
      guard let timing = r.bits(1) else { return nil }
      var bufferDelayLength = 0
      if timing == 1 {
        guard r.skip(64), let equal = r.bits(1) else { return nil }
        equalPictureInterval = equal == 1
        if equalPictureInterval { guard r.ue() != nil else { return nil } }
        guard let model = r.bits(1) else { return nil }
        decoderModel = model == 1
        if decoderModel {
          guard let delay = r.bits(5), r.skip(32), let removal = r.bits(5),
            let presentation = r.bits(5)
          else { return nil }
          bufferDelayLength = delay + 1
          bufferRemovalTimeLength = removal + 1
          presentationTimeLength = presentation + 1
        }
      }
      guard let initialDelay = r.bits(1), let count = r.bits(5) else { return nil }
      for _ in 0...count {
        guard let idc = r.bits(12), let level = r.bits(5) else { return nil }
        if level > 7 { guard r.skip(1) else { return nil } }
        var present = false
        if decoderModel {
          guard let flag = r.bits(1) else { return nil }
          present = flag == 1
          if present { guard r.skip(2 * bufferDelayLength + 1) else { return nil } }
        }
        if initialDelay == 1 {
          guard let flag = r.bits(1) else { return nil }
          if flag == 1 { guard r.skip(4) else { return nil } }
        }
        operatingPoints.append((idc, present))
      }
    }
    guard let w = r.bits(4), let h = r.bits(4) else { return nil }
    (widthBits, heightBits) = (w + 1, h + 1)
    guard let mw = r.bits(widthBits), let mh = r.bits(heightBits) else { return nil }
    (maxWidth, maxHeight) = (mw + 1, mh + 1)
    if !reduced {
      guard let ids = r.bits(1) else { return nil }
      frameIDs = ids == 1
      if frameIDs {
        guard let delta = r.bits(4), let extra = r.bits(3) else { return nil }
        frameIDLength = extra + delta + 3
      }
    }
    guard let large = r.bits(1), r.skip(2) else { return nil }
    largeSuperblocks = large == 1
    if !reduced {
      guard r.skip(4), let orderHint = r.bits(1) else { return nil }
      if orderHint == 1 { guard r.skip(2) else { return nil } }
      guard let choose = r.bits(1) else { return nil }
      if choose == 1 {
        forceScreenContentTools = 2
      } else {
        guard let value = r.bits(1) else { return nil }
        forceScreenContentTools = value
      }
      if forceScreenContentTools > 0 {
        guard let chooseMV = r.bits(1) else { return nil }
        if chooseMV == 1 {
          forceIntegerMV = 2
        } else {
          guard let value = r.bits(1) else { return nil }
          forceIntegerMV = value
        }
      } else {
        forceIntegerMV = 2
      }
      if orderHint == 1 {
        guard let bits = r.bits(3) else { return nil }
        orderHintBits = bits + 1
      }
    }
    guard let superresFlag = r.bits(1) else { return nil }
    superres = superresFlag == 1
  }

  /// `base_q_idx` of a shown key frame's header; nil for any other frame.
  func baseQIndex(frameHeader: ArraySlice<UInt8>, temporalID: Int, spatialID: Int) -> Int? {
    var r = BitReader(Array(frameHeader))
    if !reduced {
      guard let existing = r.bits(1), existing == 0, let type = r.bits(2), type == 0,
        let shown = r.bits(1), shown == 1
      else { return nil }
      if decoderModel, !equalPictureInterval {
        guard r.skip(presentationTimeLength) else { return nil }
      }
      // A shown key frame: showable_frame and error_resilient_mode are implied.
    }
    guard let disableCDFUpdate = r.bits(1) else { return nil }
    var screenContentTools = forceScreenContentTools
    if forceScreenContentTools == 2 {
      guard let value = r.bits(1) else { return nil }
      screenContentTools = value
    }
    if screenContentTools == 1, forceIntegerMV == 2 { guard r.skip(1) else { return nil } }
    if frameIDs { guard r.skip(frameIDLength) else { return nil } }
    var sizeOverride = 0
    if !reduced {
      guard let value = r.bits(1) else { return nil }
      sizeOverride = value
    }
    guard r.skip(orderHintBits) else { return nil }
    if decoderModel {
      guard let present = r.bits(1) else { return nil }
      if present == 1 {
        for point in operatingPoints where point.decoderModel {
          let inTemporal = (point.idc >> temporalID) & 1 == 1
          let inSpatial = (point.idc >> (spatialID + 8)) & 1 == 1
          if point.idc == 0 || (inTemporal && inSpatial) {
            guard r.skip(bufferRemovalTimeLength) else { return nil }
          }
        }
      }
    }
    // frame_size, superres_params, render_size.
    var width = maxWidth
    var height = maxHeight
    if sizeOverride == 1 {
      guard let w = r.bits(widthBits), let h = r.bits(heightBits) else { return nil }
      (width, height) = (w + 1, h + 1)
    }
    let upscaled = width
    if superres {
      guard let use = r.bits(1) else { return nil }
      if use == 1 {
        guard let denominator = r.bits(3) else { return nil }
        width = (upscaled * 8 + (denominator + 9) / 2) / (denominator + 9)
      }
    }
    guard let different = r.bits(1) else { return nil }
    if different == 1 { guard r.skip(32) else { return nil } }
    if screenContentTools == 1, upscaled == width { guard r.skip(1) else { return nil } }
    if !reduced, disableCDFUpdate == 0 { guard r.skip(1) else { return nil } }  // its end update
    guard skipTileInfo(&r, width: width, height: height) else { return nil }
    return r.bits(8)
  }

  /// tile_info() for a frame of `width` x `height`.
  private func skipTileInfo(_ r: inout BitReader, width: Int, height: Int) -> Bool {
    let miCols = 2 * ((width + 7) >> 3)
    let miRows = 2 * ((height + 7) >> 3)
    let sbCols = largeSuperblocks ? (miCols + 31) >> 5 : (miCols + 15) >> 4
    let sbRows = largeSuperblocks ? (miRows + 31) >> 5 : (miRows + 15) >> 4
    let sbSize = (largeSuperblocks ? 5 : 4) + 2
    let maxTileWidthSb = 4096 >> sbSize
    var maxTileAreaSb = (4096 * 2304) >> (2 * sbSize)
    func log2(_ block: Int, _ target: Int) -> Int {
      var k = 0
      while (block << k) < target { k += 1 }
      return k
    }
    let minLog2TileCols = log2(maxTileWidthSb, sbCols)
    let maxLog2TileCols = log2(1, min(sbCols, 64))
    let maxLog2TileRows = log2(1, min(sbRows, 64))
    let minLog2Tiles = max(minLog2TileCols, log2(maxTileAreaSb, sbRows * sbCols))
    guard let uniform = r.bits(1) else { return false }
    var colsLog2 = 0
    var rowsLog2 = 0
    if uniform == 1 {
      colsLog2 = minLog2TileCols
      while colsLog2 < maxLog2TileCols {
        guard let more = r.bits(1) else { return false }
        if more == 0 { break }
        colsLog2 += 1
      }
      rowsLog2 = max(minLog2Tiles - colsLog2, 0)
      while rowsLog2 < maxLog2TileRows {
        guard let more = r.bits(1) else { return false }
        if more == 0 { break }
        rowsLog2 += 1
      }
    } else {
      var widest = 0
      var start = 0
      var columns = 0
      while start < sbCols, columns < 64 {
        guard let size = r.ns(min(sbCols - start, maxTileWidthSb)) else { return false }
        widest = max(widest, size + 1)
        start += size + 1
        columns += 1
      }
      colsLog2 = log2(1, columns)
      maxTileAreaSb = minLog2Tiles > 0 ? (sbRows * sbCols) >> (minLog2Tiles + 1) : sbRows * sbCols
      let maxTileHeightSb = max(maxTileAreaSb / max(widest, 1), 1)
      start = 0
      var rows = 0
      while start < sbRows, rows < 64 {
        guard let size = r.ns(min(sbRows - start, maxTileHeightSb)) else { return false }
        start += size + 1
        rows += 1
      }
      rowsLog2 = log2(1, rows)
    }
    if colsLog2 > 0 || rowsLog2 > 0 { return r.skip(colsLog2 + rowsLog2 + 2) }
    return true
  }
}
