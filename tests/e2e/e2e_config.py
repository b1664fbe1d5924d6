"""Constants shared by the e2e fixtures and helpers (no imports of Playwright here)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]
# Streamlit scrolls inside its own container, so a full-page screenshot only holds what fits the viewport: keep
# it tall (screenshots are cropped to the content, and the viewport grows for longer pages).
VIEWPORT = {"width": 1400, "height": 2400}
HEALTH_TIMEOUT_S = 60
DEMO = "demo-chimera-mixed"
# Pages whose screenshots the README shows: copied to docs/screenshots/ when UPDATE_SCREENSHOTS=1.
README_SHOTS = ("runs", "overview", "document", "queue", "scores", "agreement", "export")
DOCS_SHOTS = ROOT / "docs" / "screenshots"
