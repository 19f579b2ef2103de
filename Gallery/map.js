// The map: the photos with a position, gathered into markers by where they are (Leaflet,
// loaded by the map's page before this).

import { api } from "./api.js";
import { assetPageURL } from "./words.js";

export function mapPage(main) {
  const element = main.querySelector("#map");
  if (!element || !window.L) return;
  const status = main.querySelector(".map-status");
  const map = L.map(element, { worldCopyJump: true }).setView([20, 0], 2);
  L.tileLayer(element.dataset.tiles, { maxZoom: 18, attribution: element.dataset.attribution || "" }).addTo(map);
  const markers = L.layerGroup().addTo(map);
  let round = 0, fitted = false;
  async function refresh() {
    const here = ++round;
    const b = map.getBounds();
    const clamp = (v, lo, hi) => Math.min(hi, Math.max(lo, v));
    const wide = b.getEast() - b.getWest() >= 360;
    const params = new URLSearchParams({
      zoom: String(map.getZoom()),
      south: String(clamp(b.getSouth(), -90, 90)), north: String(clamp(b.getNorth(), -90, 90)),
      west: String(wide ? -180 : L.Util.wrapNum(b.getWest(), [-180, 180], true)),
      east: String(wide ? 180 : L.Util.wrapNum(b.getEast(), [-180, 180], true)),
    });
    try {
      const { clusters } = await (await api("GET", "/api/map?" + params)).json();
      if (here !== round) return;
      markers.clearLayers();
      for (const cluster of clusters) {
        const icon = document.createElement("div");
        if (cluster.poster) {
          const img = document.createElement("img");
          img.alt = "";
          img.src = "/api/assets/" + cluster.poster + "/thumbnail?size=128&v=" + cluster.version;
          icon.append(img);
        }
        const count = document.createElement("span");
        count.className = "n";
        count.textContent = String(cluster.count);
        icon.append(count);
        const marker = L.marker([cluster.latitude, cluster.longitude], {
          icon: L.divIcon({ className: "map-cluster", html: icon, iconSize: [52, 52] }),
          title: cluster.count === 1 ? "1 photo" : cluster.count + " photos",
          keyboard: true,
        });
        // A cluster opens up; one photo opens.
        marker.on("click", () => {
          if (cluster.count > 1 && map.getZoom() < 18) map.setView([cluster.latitude, cluster.longitude], map.getZoom() + 2);
          else if (cluster.poster) location.href = assetPageURL(cluster.poster);
        });
        markers.addLayer(marker);
      }
      const total = clusters.reduce((sum, c) => sum + c.count, 0);
      status.textContent = total === 1 ? "1 photo here" : total + " photos here";
      if (!fitted && clusters.length) {
        fitted = true;
        map.fitBounds(L.latLngBounds(clusters.map((c) => [c.latitude, c.longitude])).pad(0.2), { maxZoom: 12 });
      }
    } catch (error) {
      status.textContent = error.message;
    }
  }
  map.on("moveend", refresh);
  refresh();
}
