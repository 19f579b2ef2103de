/// The IANA time zone at a position, from `zones.bin`: the time-zone boundaries (land and
/// sea) as polygons with holes, found through one-degree cells. A cell inside one zone
/// answers at once; elsewhere the cell's candidate polygons are tested, box first, then by
/// the even-odd rule over all their rings.
public struct ZoneIndex: Sendable {
  private let file: MappedFile
  /// The zones' IANA names, by index.
  public let names: [String]
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
      let name = file.string(at: at, within: namesAt..<namesAt + namesLength)
    {
      names.append(name)
      at += name.utf8.count + 1
    }
    guard names.count == zoneCount, zoneCount > 0,
      Int(file.u32(cellsAt + GeoGrid.cells * 4)) == candidateCount,
      Int(file.u32(ringsAt + ringCount * 4)) == pointCount
    else { throw file.damaged("its tables do not agree") }
    self.names = names
  }

  /// The zone at a position, such as `America/Denver` (at sea, `Etc/GMT+7` and the like);
  /// nil for a position that is not one, or in no polygon.
  public func zone(latitude: Double, longitude: Double) -> String? {
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
      var inside = false
      for ring in firstRing..<firstRing + rings where crosses(ring, x: x, y: y) {
        inside.toggle()
      }
      if inside {
        let zone = Int(file.u32(at))
        return zone < names.count ? names[zone] : nil
      }
    }
    return nil
  }

  /// Whether a ray from (x, y) eastwards crosses ring `ring` an odd number of times. Exact:
  /// integer coordinates, and the crossing compared by cross-multiplying.
  private func crosses(_ ring: Int, x: Int64, y: Int64) -> Bool {
    let first = Int(file.u32(ringsAt + ring * 4))
    let end = min(Int(file.u32(ringsAt + ring * 4 + 4)), pointCount)
    guard end - first >= 3 else { return false }
    var odd = false
    var previousAt = pointsAt + (end - 1) * 8
    var px = Int64(file.i32(previousAt))
    var py = Int64(file.i32(previousAt + 4))
    for point in first..<end {
      let at = pointsAt + point * 8
      let cx = Int64(file.i32(at))
      let cy = Int64(file.i32(at + 4))
      if (cy > y) != (py > y) {
        // x < px + (y - py) * (cx - px) / (cy - py), without dividing.
        let lhs = (x - px) * (cy - py)
        let rhs = (y - py) * (cx - px)
        if cy > py ? lhs < rhs : lhs > rhs { odd.toggle() }
      }
      (px, py, previousAt) = (cx, cy, at)
    }
    return odd
  }
}
