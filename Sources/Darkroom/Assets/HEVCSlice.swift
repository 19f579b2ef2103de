/// Just enough of H.265 to find an intra picture's quantiser: the fields of its sequence and
/// picture parameter sets that come before the slice header's `slice_qp_delta`, and that
/// header up to it (ITU-T H.265 sections 7.3.2.2, 7.3.2.3 and 7.3.6.1).
enum HEVCSlice {
  /// SliceQpY of the first slice in `data` (NAL units with the length prefixes `config`, an
  /// `hvcC` payload, names), or nil when the slice is not an IDR intra slice this reader
  /// follows.
  static func qp(config: ArraySlice<UInt8>, data: ArraySlice<UInt8>) -> Int? {
    let c = Array(config)
    guard c.count >= 23 else { return nil }
    let lengthSize = Int(c[21] & 3) + 1
    var sps: [UInt8]?
    var pps: [UInt8]?
    var at = 23
    for _ in 0..<Int(c[22]) {
      guard at + 3 <= c.count else { return nil }
      let type = c[at] & 0x3F
      let count = Int(c[at + 1]) << 8 | Int(c[at + 2])
      at += 3
      for _ in 0..<count {
        guard at + 2 <= c.count else { return nil }
        let length = Int(c[at]) << 8 | Int(c[at + 1])
        guard at + 2 + length <= c.count else { return nil }
        let unit = Array(c[at + 2..<at + 2 + length])
        if type == 33, sps == nil { sps = unit }
        if type == 34, pps == nil { pps = unit }
        at += 2 + length
      }
    }
    guard let sps, let pps, let sequence = Sequence(sps), let picture = Picture(pps),
      let slice = firstSlice(data, lengthSize: lengthSize)
    else { return nil }
    return sliceQP(slice, sequence, picture)
  }

  /// The first slice NAL unit (types 0-31) of `data`.
  private static func firstSlice(_ data: ArraySlice<UInt8>, lengthSize: Int) -> [UInt8]? {
    var at = data.startIndex
    for _ in 0..<16 {
      guard at + lengthSize <= data.endIndex else { return nil }
      let length = data[at..<at + lengthSize].reduce(0) { $0 << 8 | Int($1) }
      at += lengthSize
      guard length >= 2 else { return nil }
      let end = min(at + length, data.endIndex, at + 256)  // the header is in the first bytes
      if (data[at] >> 1) & 0x3F < 32 { return Array(data[at..<end]) }
      at += length
    }
    return nil
  }

  /// What the slice header's parsing needs of the sequence parameter set.
  struct Sequence {
    var separateColourPlanes = false
    var chromaFormat = 1
    var sampleAdaptiveOffset = false

    init?(_ unit: [UInt8]) {
      var r = BitReader(nalUnit: unit)
      guard r.skip(4) else { return nil }  // sps_video_parameter_set_id
      guard let subLayers = r.bits(3), r.skip(1), r.skipProfileTierLevel(subLayers: subLayers),
        r.ue() != nil, let chroma = r.ue()
      else { return nil }
      chromaFormat = chroma
      if chroma == 3 {
        guard let separate = r.bits(1) else { return nil }
        separateColourPlanes = separate == 1
      }
      guard r.ue() != nil, r.ue() != nil, let window = r.bits(1) else { return nil }
      if window == 1 { for _ in 0..<4 { guard r.ue() != nil else { return nil } } }
      // Bit depths, then log2_max_pic_order_cnt_lsb_minus4.
      guard r.ue() != nil, r.ue() != nil, r.ue() != nil, let ordering = r.bits(1) else {
        return nil
      }
      for _ in (ordering == 1 ? 0 : subLayers)...subLayers {
        for _ in 0..<3 { guard r.ue() != nil else { return nil } }
      }
      // Coding and transform block sizes and depths.
      for _ in 0..<6 { guard r.ue() != nil else { return nil } }
      guard let scaling = r.bits(1) else { return nil }
      if scaling == 1 {
        guard let present = r.bits(1) else { return nil }
        if present == 1, !r.skipScalingListData() { return nil }
      }
      guard r.skip(1), let offset = r.bits(1) else { return nil }  // amp_enabled_flag, SAO
      sampleAdaptiveOffset = offset == 1
    }
  }

  /// What the slice header's parsing needs of the picture parameter set.
  struct Picture {
    var outputFlagPresent = false
    var extraSliceHeaderBits = 0
    var initialQP = 26

    init?(_ unit: [UInt8]) {
      var r = BitReader(nalUnit: unit)
      guard r.ue() != nil, r.ue() != nil, r.skip(1), let output = r.bits(1),
        let extra = r.bits(3), r.skip(2), r.ue() != nil, r.ue() != nil, let initial = r.se()
      else { return nil }
      outputFlagPresent = output == 1
      extraSliceHeaderBits = extra
      initialQP = 26 + initial
    }
  }

  private static func sliceQP(_ unit: [UInt8], _ sequence: Sequence, _ picture: Picture) -> Int? {
    let type = Int(unit[0] >> 1) & 0x3F
    guard type == 19 || type == 20 else { return nil }  // IDR: no reference picture fields
    var r = BitReader(nalUnit: unit)
    guard let first = r.bits(1), first == 1, r.skip(1), r.ue() != nil,
      r.skip(picture.extraSliceHeaderBits), let sliceType = r.ue(), sliceType == 2
    else { return nil }
    if picture.outputFlagPresent { guard r.skip(1) else { return nil } }
    if sequence.separateColourPlanes { guard r.skip(2) else { return nil } }
    if sequence.sampleAdaptiveOffset {
      let chromaArrayType = sequence.separateColourPlanes ? 0 : sequence.chromaFormat
      guard r.skip(chromaArrayType != 0 ? 2 : 1) else { return nil }
    }
    guard let delta = r.se() else { return nil }
    let qp = picture.initialQP + delta
    return (-12...51).contains(qp) ? qp : nil
  }
}

extension BitReader {
  /// profile_tier_level(1, subLayers).
  mutating func skipProfileTierLevel(subLayers: Int) -> Bool {
    guard skip(96) else { return false }
    var profiles: [Bool] = []
    var levels: [Bool] = []
    for _ in 0..<subLayers {
      guard let profile = bits(1), let level = bits(1) else { return false }
      profiles.append(profile == 1)
      levels.append(level == 1)
    }
    if subLayers > 0 { guard skip(2 * (8 - subLayers)) else { return false } }
    for i in 0..<subLayers {
      if profiles[i] { guard skip(88) else { return false } }
      if levels[i] { guard skip(8) else { return false } }
    }
    return true
  }

  /// scaling_list_data().
  mutating func skipScalingListData() -> Bool {
    for size in 0..<4 {
      for _ in stride(from: 0, to: 6, by: size == 3 ? 3 : 1) {
        guard let predicted = bits(1) else { return false }
        if predicted == 0 {
          guard ue() != nil else { return false }
          continue
        }
        if size > 1 { guard se() != nil else { return false } }
        for _ in 0..<min(64, 1 << (4 + (size << 1))) { guard se() != nil else { return false } }
      }
    }
    return true
  }
}
