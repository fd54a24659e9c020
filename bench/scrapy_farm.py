"""Scrapy, configured to the same rules as our fetcher, crawling the benchmark farm.

Run by bench/pacing.py with an interpreter that has Scrapy (a bench-only
dependency, see bench/requirements.txt): python bench/scrapy_farm.py URLS.json INTERVAL
"""

from __future__ import annotations

import json
import sys

import scrapy
from scrapy.crawler import CrawlerProcess


class FarmSpider(scrapy.Spider):
    name = "farm"

    def __init__(self, urls: list[str], **kwargs):
        super().__init__(**kwargs)
        self.urls = urls

    async def start(self):
        for url in self.urls:
            yield scrapy.Request(url, dont_filter=True)

    def parse(self, response):
        return None


def main() -> None:
    urls = json.loads(open(sys.argv[1]).read())
    interval = float(sys.argv[2])
    process = CrawlerProcess(settings={
        "USER_AGENT": "TakedownWatch-bench (+https://activaterights.org)",
        "ROBOTSTXT_OBEY": True,
        "DOWNLOAD_DELAY": interval,
        "RANDOMIZE_DOWNLOAD_DELAY": False,  # the issue names this setting;
        "DOWNLOAD_DELAY_JITTER": 0,  # and its successor in Scrapy 2.19
        "CONCURRENT_REQUESTS_PER_DOMAIN": 1,
        "CONCURRENT_REQUESTS": 256,
        "AUTOTHROTTLE_ENABLED": False,
        "RETRY_ENABLED": True,
        "RETRY_TIMES": 2,  # 3 attempts in all, as ours
        "LOG_LEVEL": "WARNING",
        "TELNETCONSOLE_ENABLED": False,
        "REACTOR_THREADPOOL_MAXSIZE": 20,
    })
    process.crawl(FarmSpider, urls=urls)
    process.start()


if __name__ == "__main__":
    main()
