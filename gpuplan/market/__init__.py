"""Market data fetched at run time: ``gpuplan refresh`` pulls current prices and FX rates from providers' public
price APIs into a local SQLite store (:mod:`gpuplan.market.store`) with full history; the catalog overlays the
newest refreshed rows on the bundled ones (:mod:`gpuplan.market.overlay`). Nothing else here needs the network.
"""
