"""The web lane: chat pages driven in a real Chromium, one generation per account at a time."""

from mediaassist.providers.web.browser import chromium_available, profile_holder
from mediaassist.providers.web.provider import WebProvider, build_web_provider
from mediaassist.providers.web.tools import LoginResult, SiteCheckReport, check_site, login_account

__all__ = ["LoginResult", "SiteCheckReport", "WebProvider", "build_web_provider", "check_site", "chromium_available",
           "login_account", "profile_holder"]
