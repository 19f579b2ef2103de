/// The IANA time zone at a position, from `zones.bin`: the time-zone boundaries (land and
/// sea) as polygons with holes, found through one-degree cells. A cell inside one zone
/// answers at once; elsewhere the cell's candidate polygons are tested, box first, then by
/// the even-odd rule over all their rings.
package struct ZoneIndex: Sendable {
  private let file: MappedFile
  /// The zones' IANA names, by index.
  package let names: [String]
  private let polygonCount: Int
  private let ringCount: Int
  private let pointCount: Int
  private let polygonsAt: Int
  private let ringsAt: Int
  private let pointsAt: Int
  private let onlyZoneAt: Int
  private let cellsAt: Int
  private let candidatesAt: Int
  private let candidateCount: Int
  private static let polygonSize = 28
  private let bands = ZoneBands()

  init(_ file: MappedFile) throws(DarkroomError) {
    self.file = file
    guard file.starts(with: "DRZONE01"), file.count >= 28 else {
      throw file.damaged("not a Darkroom time-zone file")
    }
    let zoneCount = Int(file.u32(8))
    (polygonCount, ringCount, pointCount) =
      (Int(file.u32(12)), Int(file.u32(16)), Int(file.u32(20)))
    let namesLength = Int(file.u32(24))
    let namesAt = 28
    polygonsAt = namesAt + namesLength
    ringsAt = polygonsAt + polygonCount * Self.polygonSize
    pointsAt = ringsAt + (ringCount + 1) * 4
    onlyZoneAt = pointsAt + pointCount * 8
    cellsAt = onlyZoneAt + GeoGrid.cells * 4
    candidatesAt = cellsAt + (GeoGrid.cells + 1) * 4
    guard candidatesAt <= file.count, (file.count - candidatesAt) % 4 == 0 else {
      throw file.damaged("its sizes do not add up")
    }
    candidateCount = (file.count - candidatesAt) / 4
    var names: [String] = []
    var at = namesAt
    while names.count < zoneCount,
      let (name, length) = file.string(at: at, within: namesAt..<namesAt + namesLength)
    {
      names.append(name)
      at += length + 1
    }
    guard names.count == zoneCount, zoneCount > 0,
      Int(file.u32(cellsAt + GeoGrid.cells * 4)) == candidateCount,
      Int(file.u32(ringsAt + ringCount * 4)) == pointCount
    else { throw file.damaged("its tables do not agree") }
    self.names = names
  }

  /// The zone at a position, such as `America/Denver` (at sea, `Etc/GMT+7` and the like);
  /// nil for a position that is not one, or in no polygon.
  package func zone(latitude: Double, longitude: Double) -> String? {
    guard abs(latitude) <= 90, abs(longitude) <= 180 else { return nil }
    let cell = GeoGrid.row(latitude) * GeoGrid.columns + GeoGrid.column(longitude)
    let only = Int(file.u32(onlyZoneAt + cell * 4))
    if only < names.count { return names[only] }
    let y = Int64((latitude * 1e7).rounded())
    let x = Int64((longitude * 1e7).rounded())
    let start = Int(file.u32(cellsAt + cell * 4))
    let end = min(Int(file.u32(cellsAt + cell * 4 + 4)), candidateCount)
    guard start < end else { return nil }
    for candidate in start..<end {
      let polygon = Int(file.u32(candidatesAt + candidate * 4))
      guard polygon < polygonCount else { continue }
      let at = polygonsAt + polygon * Self.polygonSize
      let (minY, minX) = (Int64(file.i32(at + 12)), Int64(file.i32(at + 16)))
      let (maxY, maxX) = (Int64(file.i32(at + 20)), Int64(file.i32(at + 24)))
      guard y >= minY, y <= maxY, x >= minX, x <= maxX else { continue }
      let (firstRing, rings) = (Int(file.u32(at + 4)), Int(file.u32(at + 8)))
      guard firstRing + rings <= ringCount else { continue }
      if inside(polygon, firstRing..<firstRing + rings, x: x, y: y) {
        let zone = Int(file.u32(at))
        return zone < names.count ? names[zone] : nil
      }
    }
    return nil
  }

  /// Whether (x, y) is inside polygon `polygon` (its rings `rings`): a ray from it eastwards
  /// crosses the polygon's edges an odd number of times. Exact: integer coordinates, and
  /// each crossing compared by cross-multiplying. Only edges that reach the point's band of
  /// latitude (a tenth of a degree) can cross the ray; they are gathered once per polygon and
  /// band, so a coast with 100,000 points costs a few hundred comparisons after the first.
  private func inside(_ polygon: Int, _ rings: Range<Int>, x: Int64, y: Int64) -> Bool {
    let band = min(Self.bands - 1, max(0, Int((y + 900_000_000) / Self.bandHeight)))
    let key = polygon * Self.bands + band
    let edges =
      bands.edges.withLock { $0[key] } ?? gather(rings, band: band, key: key)
    var odd = false
    var at = 0
    while at + 3 < edges.count {
      let (px, py) = (Int64(edges[at]), Int64(edges[at + 1]))
      let (cx, cy) = (Int64(edges[at + 2]), Int64(edges[at + 3]))
      if (cy > y) != (py > y) {
        // x < px + (y - py) * (cx - px) / (cy - py), without dividing.
        let lhs = (x - px) * (cy - py)
        let rhs = (y - py) * (cx - px)
        if cy > py ? lhs < rhs : lhs > rhs { odd.toggle() }
      }
      at += 4
    }
    return odd
  }

  /// Bands of a tenth of a degree, in 1e-7 degrees.
  private static let bandHeight: Int64 = 1_000_000
  private static let bands = 1800

  /// The edges of `rings` (as x1, y1, x2, y2) that reach band `band`, kept under `key`.
  private func gather(_ rings: Range<Int>, band: Int, key: Int) -> [Int32] {
    let low = Int64(band) * Self.bandHeight - 900_000_000
    let high = low + Self.bandHeight
    var edges: [Int32] = []
    for ring in rings {
      let first = Int(file.u32(ringsAt + ring * 4))
      let end = min(Int(file.u32(ringsAt + ring * 4 + 4)), pointCount)
      guard first < end, end - first >= 3 else { continue }
      var previous = (file.i32(pointsAt + (end - 1) * 8), file.i32(pointsAt + (end - 1) * 8 + 4))
      for point in first..<end {
        let current = (file.i32(pointsAt + point * 8), file.i32(pointsAt + point * 8 + 4))
        // A point off the globe is damage: left out, so the products in `inside` stay within
        // 64 bits (real ones are at most 3.6e9 x 1.8e9).
        guard abs(Int64(current.0)) <= 1_800_000_000, abs(Int64(current.1)) <= 900_000_000 else {
          continue
        }
        let (a, b) = (Int64(previous.1), Int64(current.1))
        if max(a, b) > low && min(a, b) <= high {
          edges += [previous.0, previous.1, current.0, current.1]
        }
        previous = current
      }
    }
    bands.edges.withLock { cache in
      if cache.count >= ZoneBands.limit { cache.removeAll(keepingCapacity: true) }
      cache[key] = edges
    }
    return edges
  }
}

/// The edges of polygons by band of latitude, gathered as lookups need them: at most
/// ``limit`` bands, then gathered afresh.
final class ZoneBands: Sendable {
  static let limit = 4096
  let edges = Locked<[Int: [Int32]]>([:])
}
