/// How an image's colour is coded when no ICC profile says it: the ITU-T H.273 code points a
/// HEIF or AVIF file keeps in an `nclx` colour box (`colr`), and its bits per sample (`pixi`).
///
/// libvips 8.14 ignores `nclx` ("ignoring nclx profile"): a PQ or HLG photo would be shown
/// with its signal read as sRGB (flat and dark), and a Display P3 one with dull colours. The
/// renderer converts them with this (see ``needsConversion``).
///
/// `CodedColour` is a `Sendable` value type.
package struct CodedColour: Sendable, Codable, Equatable {
  /// H.273 colour primaries: 1 BT.709/sRGB, 9 BT.2020, 12 Display P3 (SMPTE EG 432-1).
  package var primaries: Int
  /// H.273 transfer characteristics: 1, 6, 14, 15 BT.709 (BT.1886), 13 sRGB, 16 PQ
  /// (SMPTE ST 2084), 18 HLG (ARIB STD-B67).
  package var transfer: Int
  /// H.273 matrix coefficients (how YCbCr was made; libheif has applied them).
  package var matrix: Int
  package var fullRange: Bool
  /// Bits per sample of the coded image (8, 10, 12), from `pixi`; nil when the file says not.
  package var bitDepth: Int?

  /// The primaries' name: `BT.709`, `BT.2020`, `Display P3`, or `H.273 primaries N`.
  package var primariesName: String {
    switch primaries {
    case 1: "BT.709"
    case 9: "BT.2020"
    case 12: "Display P3"
    case 2: "unspecified"
    default: "H.273 primaries \(primaries)"
    }
  }

  /// The transfer function's name: `sRGB`, `BT.709`, `PQ`, `HLG`, or `H.273 transfer N`.
  package var transferName: String {
    switch transfer {
    case 13: "sRGB"
    case 1, 6, 14, 15: "BT.709"
    case 16: "PQ"
    case 18: "HLG"
    case 2: "unspecified"
    default: "H.273 transfer \(transfer)"
    }
  }

  /// High dynamic range: PQ or HLG.
  package var isHDR: Bool { transfer == 16 || transfer == 18 }

  /// Whether display renditions must convert the pixels (libvips shows them as sRGB): HDR,
  /// or primaries other than sRGB's that Darkroom knows (BT.2020, Display P3).
  var needsConversion: Bool {
    isHDR || ((primaries == 9 || primaries == 12) && [1, 6, 13, 14, 15].contains(transfer))
  }
}

extension CodedColour {
  /// The coding as `info --json` prints it: names, and the H.273 numbers they stand for.
  package struct Printed: Encodable, Sendable {
    var primaries, transfer: String
    var bitDepth: Int?
    var cicp: [Int]
    var fullRange: Bool
  }

  /// The coding as `info --json` prints it (docs/info-json.md).
  package var printed: Printed {
    Printed(
      primaries: primariesName, transfer: transferName, bitDepth: bitDepth,
      cicp: [primaries, transfer, matrix], fullRange: fullRange)
  }

  /// The coding in words, as `info` shows it: `BT.2020, HLG, 10-bit`.
  package var summary: String {
    [primariesName, transferName, bitDepth.map { "\($0)-bit" }].compactMap { $0 }
      .joined(separator: ", ")
  }

  /// The `nclx` colour of a `colr` box's payload (its colour type first); nil for another
  /// type (an ICC profile) or a payload too short.
  static func nclx(_ payload: ArraySlice<UInt8>) -> CodedColour? {
    let p = payload.startIndex
    guard payload.count >= 11,
      String(decoding: payload[p..<p + 4], as: UTF8.self) == "nclx"
    else { return nil }
    func number(_ at: Int) -> Int { Int(payload[p + at]) << 8 | Int(payload[p + at + 1]) }
    return CodedColour(
      primaries: number(4), transfer: number(6), matrix: number(8),
      fullRange: payload[p + 10] & 0x80 != 0)
  }

  /// The `nclx` colour and `pixi` depth of a HEIF or AVIF file, from its `meta` box's item
  /// properties (the first of each, which is the primary image's in what phones and encoders
  /// write); nil when the file has no `nclx` box, or is not ISO media. Reads box headers and
  /// the `meta` box only (bounded: refuses a `meta` over 1 MiB).
  static func read(_ source: ByteSource) throws -> CodedColour? {
    guard let meta = try box("meta", in: source, from: 0, to: source.count),
      meta.count <= 1 << 20, let bytes = try source.bytes(meta.start, meta.count)
    else { return nil }
    let payload = Array(bytes)
    // `meta` is a full box: version and flags before its children.
    guard let iprp = ISOBoxes.children(in: payload, range: 4..<payload.count)["iprp"],
      let ipco = ISOBoxes.children(in: payload, range: iprp)["ipco"]
    else { return nil }
    var colour: CodedColour?
    var depth: Int?
    var at = ipco.lowerBound
    while let (type, range, next) = ISOBoxes.next(in: payload, at: at, end: ipco.upperBound) {
      if type == "colr", colour == nil { colour = nclx(payload[range]) }
      // pixi: version and flags, a channel count, then each channel's bits.
      if type == "pixi", depth == nil, range.count >= 6, payload[range.lowerBound + 4] > 0 {
        depth = Int(payload[range.lowerBound + 5])
      }
      at = next
    }
    colour?.bitDepth = depth
    return colour
  }

  /// The payload of the first top-level box of `type`: where it starts and how long it is.
  private static func box(_ type: String, in source: ByteSource, from start: Int, to end: Int)
    throws -> (start: Int, count: Int)?
  {
    var at = start
    for _ in 0..<64 {
      guard at + 8 <= end, let head = try source.bytes(at, 8) else { return nil }
      let header = Array(head)
      var size = Int(header[0]) << 24 | Int(header[1]) << 16 | Int(header[2]) << 8 | Int(header[3])
      var headerSize = 8
      if size == 1 {
        guard let large = try source.bytes(at + 8, 8) else { return nil }
        size = large.reduce(0) { $0 << 8 | Int($1) }
        headerSize = 16
      } else if size == 0 {
        size = end - at
      }
      guard size >= headerSize, at + size <= end, at + size > at else { return nil }
      if String(decoding: header[4..<8], as: UTF8.self) == type {
        return (at + headerSize, size - headerSize)
      }
      at += size
    }
    return nil
  }
}
