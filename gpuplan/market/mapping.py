"""Provider SKUs to gpuplan GPU names, never guessed: an instance type the catalog already lists for the
provider keeps that row's GPU and count; otherwise the provider's own GPU name must resolve through the alias
table (``gpu_aliases.csv``). Whatever resolves by neither is reported as unmapped, and not stored."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from gpuplan.catalog import Catalog
from gpuplan.units import GiB


@dataclass(frozen=True)
class Known:
    gpu: str
    gpu_count: float
    vcpus: float | None
    ram_gib: float | None


@dataclass
class Mapper:
    catalog: Catalog
    provider: str  # the catalog's provider name ("AWS", "Tencent Cloud")
    unmapped: dict[str, str] = field(default_factory=dict)  # SKU -> what the provider calls its GPU
    not_offered: dict[str, str] = field(default_factory=dict)  # "SKU in region" -> the provider's answer

    def instance(self, instance_type: str) -> Known | None:
        return self._instances.get(instance_type)

    def gpu(self, *names: str) -> str | None:
        """The canonical GPU for the first of ``names`` the alias table knows (None: unknown)."""
        for name in names:
            if name and (canonical := self.catalog.resolve_gpu(name.strip())):
                return canonical
        return None

    def miss(self, sku: str, gpu_text: str) -> None:
        self.unmapped[sku] = gpu_text

    def absent(self, sku: str, region: str, answer: str) -> None:
        """A SKU the catalog knows that the provider says it does not sell in ``region`` (not a mapping gap)."""
        self.not_offered[f"{sku} in {region}"] = answer

    def instance_types(self) -> list[tuple[str, str]]:
        """(instance_type, region) of the catalog's rows for this provider (what Alibaba Cloud is asked about)."""
        return sorted({(o.instance_type, o.region) for o in self.catalog.offers if o.provider == self.provider})

    @cached_property
    def _instances(self) -> dict[str, Known]:
        return {o.instance_type: Known(o.gpu, o.gpu_count, o.vcpus, o.ram_bytes / GiB if o.ram_bytes else None)
                for o in self.catalog.offers if o.provider == self.provider}
