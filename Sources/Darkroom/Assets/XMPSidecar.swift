/// A change to what a photo says of itself: its description, rating and keywords, written to
/// its sidecar `NAME.EXT.xmp` (never to the photo).
///
/// ```swift
/// var change = MetadataEdit()
/// change.rating = 4
/// change.addKeywords = ["Colorado"]
/// try library.writeMetadata(change, to: [id])
/// ```
///
/// A nil field is left as it is. `MetadataEdit` is a `Sendable` value type, and encodes as
/// the JSON the API takes (`caption`, `rating`, `keywords`, `addKeywords`, `removeKeywords`).
package struct MetadataEdit: Sendable, Equatable, Codable {
  /// The new description; "" takes the sidecar's away, so the photo's own shows again.
  package var caption: String?
  /// The new rating: 1 to 5 stars, 0 for none, -1 for rejected.
  package var rating: Int?
  /// The keywords, all of them (replacing those the photo has).
  package var keywords: [String]?
  /// Keywords to add to those the photo has.
  package var addKeywords: [String]?
  /// Keywords to take off.
  package var removeKeywords: [String]?

  package init(
    caption: String? = nil, rating: Int? = nil, keywords: [String]? = nil,
    addKeywords: [String]? = nil, removeKeywords: [String]? = nil
  ) {
    (self.caption, self.rating, self.keywords) = (caption, rating, keywords)
    (self.addKeywords, self.removeKeywords) = (addKeywords, removeKeywords)
  }

  /// Whether the change changes nothing.
  package var isEmpty: Bool {
    caption == nil && rating == nil && keywords == nil && (addKeywords ?? []).isEmpty
      && (removeKeywords ?? []).isEmpty
  }

  /// Whether keywords change.
  var changesKeywords: Bool {
    keywords != nil || !(addKeywords ?? []).isEmpty || !(removeKeywords ?? []).isEmpty
  }

  /// The longest description taken, and the longest keyword, in Unicode code points (as JSON
  /// Schema counts a string's length).
  package static let maxCaptionLength = 16_384
  package static let maxKeywordLength = 64

  /// Refuses a change that cannot be written as asked.
  ///
  /// - Throws: `invalidArgument` naming the value: a rating outside -1 to 5, a description
  ///   over 16,384 characters, an empty keyword or one over 64, over 1,000 keywords in a list,
  ///   or a character XML cannot hold well (a control character; a tab or line break in a
  ///   keyword). The API's schema (docs/openapi.yaml `MetadataBody`) says the same.
  package func validate() throws(DarkroomError) {
    func refuse(_ message: String) -> DarkroomError { DarkroomError(.invalidArgument, message) }
    if let rating, !(-1...5).contains(rating) {
      throw refuse("rating \(rating) is not -1 (rejected), 0 (none) or 1 to 5 stars")
    }
    if let caption {
      guard caption.unicodeScalars.count <= Self.maxCaptionLength else {
        throw refuse("the description is over \(Self.maxCaptionLength) characters")
      }
      guard Self.xmlSafe(caption, lines: true) else {
        throw refuse("the description has a control character XML cannot hold")
      }
    }
    let lists = [keywords ?? [], addKeywords ?? [], removeKeywords ?? []]
    guard lists.allSatisfy({ $0.count <= 1000 }) else { throw refuse("over 1000 keywords") }
    for keyword in lists.joined() {
      guard !keyword.unicodeScalars.allSatisfy(Self.isSpace) else {
        throw refuse("a keyword is empty")
      }
      guard keyword.unicodeScalars.count <= Self.maxKeywordLength,
        Self.xmlSafe(keyword, lines: false)
      else {
        throw refuse(
          "keyword \"\(keyword.prefix(40))\" is over 64 characters or holds a tab, line break or control character"
        )
      }
    }
  }

  /// Whether XML 1.0 can hold `text` well: no control characters (C0, DEL, C1), but with
  /// `lines` tabs and line breaks.
  private static func xmlSafe(_ text: String, lines: Bool) -> Bool {
    text.unicodeScalars.allSatisfy { scalar in
      switch scalar.value {
      case 0x09, 0x0A, 0x0D: return lines
      case 0..<0x20, 0x7F...0x9F, 0xFFFE, 0xFFFF: return false
      default: return true
      }
    }
  }

  /// Spaces as JSON Schema's (ECMAScript's) `\s` knows them, so that the API's schema and
  /// this check refuse the same keywords.
  private static func isSpace(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0x09...0x0D, 0x20, 0xA0, 0x1680, 0x2000...0x200A, 0x2028, 0x2029, 0x202F, 0x205F,
      0x3000, 0xFEFF:
      return true
    default: return false
    }
  }

  /// The keywords after the change, given those the photo has now.
  func keywords(after current: [String]) -> [String] {
    var result = keywords ?? current
    for keyword in addKeywords ?? [] where !result.contains(keyword) { result.append(keyword) }
    let removed = Set(removeKeywords ?? [])
    return result.filter { !removed.contains($0) }
  }
}

/// Writes ``MetadataEdit``s into XMP sidecars, keeping every property it does not write: the
/// properties it changes are cut from the packet where they stand and written anew just
/// inside its first `rdf:Description`, each declaring its own namespace; the rest of the
/// bytes are kept as they were.
enum XMPSidecar {
  /// The packet `existing` (nil: a new one) with `change` made; `currentKeywords` are the
  /// photo's keywords now, for adding and removing.
  ///
  /// - Throws: ``XMPPacket/Refusal`` when `existing` cannot be read (it is then left alone:
  ///   Darkroom never rewrites a sidecar it does not understand) or has no `rdf:Description`.
  static func updated(
    _ existing: [UInt8]?, with change: MetadataEdit, currentKeywords: [String]
  ) throws(XMPPacket.Refusal) -> [UInt8] {
    // Written back as UTF-8, whatever it was read as (a UTF-16 sidecar's places are in
    // its UTF-8 form).
    let bytes = existing.map(XMPPacket.utf8) ?? Array(emptyPacket.utf8)
    let packet = try XMPPacket(bytes)
    guard let insertion = packet.insertion else {
      throw XMPPacket.Refusal(description: "it has no rdf:Description to write into")
    }
    var cut: [Range<Int>] = []
    var added = ""
    func replace(_ namespace: String, _ name: String, with element: String?) {
      cut += packet.spans[namespace + name] ?? []
      if let element { added += "\n   " + element }
    }
    if let caption = change.caption {
      replace(
        XMPPacket.dc, "description",
        with: caption.isEmpty
          ? nil
          : #"<dc:description xmlns:dc="\#(XMPPacket.dc)"><rdf:Alt xmlns:rdf="\#(XMPPacket.rdf)">"#
            + #"<rdf:li xml:lang="x-default">\#(escaped(caption))</rdf:li></rdf:Alt></dc:description>"#
      )
    }
    if let rating = change.rating {
      replace(
        XMPPacket.xmp, "Rating",
        with: #"<xmp:Rating xmlns:xmp="\#(XMPPacket.xmp)">\#(rating)</xmp:Rating>"#)
    }
    if change.changesKeywords {
      let keywords = change.keywords(after: currentKeywords)
      replace(XMPPacket.dc, "subject", with: bag("dc", XMPPacket.dc, "subject", keywords))
      // Lightroom's hierarchy is kept for the keywords that stay, so it adds none back.
      let paths = packet.list(XMPPacket.lightroom, "hierarchicalSubject")
      if !paths.isEmpty {
        let kept = paths.filter { path in
          path.split(separator: "|").last.map { keywords.contains(String($0)) } ?? false
        }
        replace(
          XMPPacket.lightroom, "hierarchicalSubject",
          with: kept.isEmpty
            ? nil : bag("lr", XMPPacket.lightroom, "hierarchicalSubject", kept))
      }
    }
    cut.sort { $0.lowerBound < $1.lowerBound }
    var out: [UInt8] = []
    out.reserveCapacity(bytes.count + added.utf8.count + 64)
    var at = 0
    func copy(upTo end: Int) {
      // What lies before `end`, less the ranges cut (they never overlap the insertion point:
      // that is the end of a start tag, and what is cut are whole properties).
      for range in cut where range.lowerBound < end {
        if range.lowerBound > at { out += bytes[at..<range.lowerBound] }
        at = max(at, min(range.upperBound, end))
      }
      if end > at { out += bytes[at..<end] }
      at = max(at, end)
    }
    if let (slash, name) = insertion.selfClosing {
      copy(upTo: slash.lowerBound)
      out += Array((">" + added + "\n  </" + name + ">").utf8)
      at = slash.upperBound
    } else {
      copy(upTo: insertion.at)
      out += Array(added.utf8)
    }
    copy(upTo: bytes.count)
    // What is written must read back: never leave a sidecar other tools would choke on.
    _ = try XMPPacket(out)
    return out
  }

  /// An `rdf:Bag` property (empty for no items: "no keywords").
  private static func bag(_ prefix: String, _ namespace: String, _ name: String, _ items: [String])
    -> String
  {
    let list = items.map { "<rdf:li>\(escaped($0))</rdf:li>" }.joined()
    return
      #"<\#(prefix):\#(name) xmlns:\#(prefix)="\#(namespace)"><rdf:Bag xmlns:rdf="\#(XMPPacket.rdf)">"#
      + list + "</rdf:Bag></\(prefix):\(name)>"
  }

  /// `text` with XML's special characters as references.
  static func escaped(_ text: String) -> String {
    var out = ""
    out.reserveCapacity(text.utf8.count)
    for character in text {
      switch character {
      case "&": out += "&amp;"
      case "<": out += "&lt;"
      case ">": out += "&gt;"
      case "\"": out += "&quot;"
      case "\r": out += "&#13;"
      default: out.append(character)
      }
    }
    return out
  }

  /// A new sidecar, as exiftool and darktable write one.
  static let emptyPacket = """
    <?xpacket begin="\u{FEFF}" id="W5M0MpCehiHzreSzNTczkc9d"?>
    <x:xmpmeta xmlns:x="adobe:ns:meta/" x:xmptk="Darkroom">
     <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
      <rdf:Description rdf:about="">
      </rdf:Description>
     </rdf:RDF>
    </x:xmpmeta>
    <?xpacket end="w"?>

    """
}
