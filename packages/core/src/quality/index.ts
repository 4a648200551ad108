export { MACROLANGUAGE_OF, toCcLanguageCode } from './language-codes';
